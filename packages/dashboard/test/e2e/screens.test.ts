/**
 * Every main screen in light and dark, at laptop and phone width, saved under test-results/ to be looked
 * at; each screen must render its own content, fit the width it is given, draw no complaint from the
 * browser (errors or CSP refusals), and pass axe-core's WCAG 2.1 A and AA rules with no serious or critical
 * violation (issue 23).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Bootstrapped,
  chromiumAvailable,
  expectAccessible,
  launchChromium,
  openPage,
  operatorAddsMember,
  ownerSession,
  rest,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const SECTIONS = [
  { title: "Role", content: "You are the support assistant of {{ shop }}. Be warm, precise and brief." },
  { title: "Rules", content: "- Never promise refunds before checking the order.\n- Answer in {{ language }}." },
  { title: "Context", content: "The customer is {{ customer.name }}.", enabled: false },
];

/** A dashboard API call in a session, as the app makes it (CSRF token from the session). */
async function dashboardCall(server: Bootstrapped, cookie: string, method: string, path: string, body?: unknown) {
  const headers = { cookie: `ps_session=${cookie}` };
  const session = await (await fetch(`${server.url}/api/dashboard/session`, { headers })).json();
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...headers, "content-type": "application/json", "x-csrf-token": session.data.csrf_token },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: any }).data;
}

// CI counts the dashboard's browser tests by this name (.ci/run).
describe.runIf(chromiumAvailable())("the dashboard, end to end: every screen, both themes, laptop and phone", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let cookie: string;
  /** A member who has not yet replaced the one-time password: sees "Choose your password". */
  let newcomerCookie: string;
  let projectPath: string;
  let emptyProjectPath: string;

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    browser = await launchChromium();
    cookie = await ownerSession(server, "screens passphrase");
    projectPath = `/p/${server.projectId}`;
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name: "Support assistant",
      description: "Answers questions about orders, shipping and returns.",
      sections: SECTIONS,
      // No message: the history then shows "No message" in subtle text on the production row's green tint.
      publish: true,
    });
    expect(created.status).toBe(201);
    const edited = SECTIONS.map((s) =>
      s.title === "Rules" ? { ...s, content: `${s.content}\n- Escalate legal questions.` } : s,
    );
    await rest(server, "PUT", "/api/v2/prompts/support-assistant", server.key, {
      sections: edited,
      message: "Escalate legal questions",
    });
    for (const name of ["Onboarding guide", "Refund policy checker", "Release notes writer"]) {
      await rest(server, "POST", "/api/v2/prompts", server.key, {
        name,
        markdown: `# Role\nYou write for {{ team }}.`,
      });
    }
    // Settings and audit with something in every list: a second key, a second member, an endpoint.
    const orgId = (await dashboardCall(server, cookie, "GET", "/api/dashboard/session")).memberships[0].org.id;
    await dashboardCall(server, cookie, "POST", `/api/dashboard/projects/${server.projectId}/keys`, { scope: "read" });
    const member = await operatorAddsMember(server, orgId, "newcomer@example.com", "viewer");
    await dashboardCall(server, cookie, "POST", `/api/dashboard/projects/${server.projectId}/webhooks`, {
      url: "https://hooks.example.com/promptstore",
      description: "Deploy bot",
      events: ["prompt.published"],
    });
    const empty = await dashboardCall(server, cookie, "POST", `/api/dashboard/orgs/${orgId}/projects`, {
      name: "Empty project",
    });
    emptyProjectPath = `/p/${empty.id}`;
    const signedIn = await fetch(`${server.url}/api/dashboard/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: member.email, password: member.password }),
    });
    newcomerCookie = signedIn.headers.get("set-cookie")!.split(";")[0]!.split("=")[1]!;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const dialog = (button: string, name: string) => async (page: Page) => {
    await page.getByRole("main").getByRole("button", { name: button }).first().click();
    await page.getByRole("dialog", { name }).waitFor();
  };
  // A screen added later (releases, the playground, label settings) is one more entry here, and so is
  // checked by axe in both themes and widths; its keyboard-only flows belong in its own test, with
  // expectAccessible at each state they reach.
  const screens: {
    name: string;
    path: () => string;
    session: () => string | null;
    shows: string;
    /** What a person does on the page to reach the state shown (a dialog open). */
    open?: (page: Page) => Promise<void>;
  }[] = [
    { name: "sign-in", path: () => "/sign-in", session: () => null, shows: "Sign in" },
    { name: "choose-password", path: () => "/", session: () => newcomerCookie, shows: "Choose your password" },
    {
      name: "prompts-empty",
      path: () => `${emptyProjectPath}/prompts`,
      session: () => cookie,
      shows: "No prompts yet",
    },
    { name: "prompts", path: () => `${projectPath}/prompts`, session: () => cookie, shows: "Support assistant" },
    { name: "new-prompt", path: () => `${projectPath}/prompts/new`, session: () => cookie, shows: "New prompt" },
    { name: "editor", path: () => `${projectPath}/prompts/support-assistant`, session: () => cookie, shows: "Tools" },
    {
      name: "history",
      path: () => `${projectPath}/prompts/support-assistant/history`,
      session: () => cookie,
      shows: "Compare versions",
    },
    {
      name: "publish-dialog",
      path: () => `${projectPath}/prompts/support-assistant/history`,
      session: () => cookie,
      shows: "Compare versions",
      open: dialog("Publish", "Publish this version?"),
    },
    {
      name: "delete-dialog",
      path: () => `${projectPath}/prompts/support-assistant`,
      session: () => cookie,
      shows: "Tools",
      open: dialog("Delete…", "Delete this prompt?"),
    },
    {
      name: "preview",
      path: () => `${projectPath}/prompts/support-assistant/preview`,
      session: () => cookie,
      shows: "Copy curl",
    },
    { name: "settings", path: () => `${projectPath}/settings`, session: () => cookie, shows: "API keys" },
    { name: "audit", path: () => `${projectPath}/audit`, session: () => cookie, shows: "Audit trail" },
    { name: "account", path: () => "/account", session: () => cookie, shows: "Change password" },
  ];

  for (const [viewport, size] of Object.entries(VIEWPORTS)) {
    for (const scheme of ["light", "dark"] as const) {
      it(`${viewport}, ${scheme}`, async () => {
        const context = await browser.newContext({ viewport: size, colorScheme: scheme });
        const { page, problems } = await openPage(context);
        try {
          for (const screen of screens) {
            await context.clearCookies();
            const session = screen.session();
            if (session) await context.addCookies([{ name: "ps_session", value: session, url: server.url }]);
            await page.goto(`${server.url}${screen.path()}`);
            await page.getByText(screen.shows, { exact: false }).first().waitFor();
            // Lazy parts (the code editor) settle before the picture is taken.
            await page.waitForLoadState("networkidle");
            await screen.open?.(page);
            await screenshot(page, `screen-${viewport}-${scheme}-${screen.name}`);
            await expectAccessible(page, `${viewport}-${scheme}-${screen.name}`);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            expect(overflow, `${screen.name} is wider than the ${viewport} screen`).toBeLessThanOrEqual(0);
          }
          expect(problems).toEqual([]);
        } finally {
          await context.close();
        }
        // 13 screens with axe on each take about 16 s alone; the whole suite's load can triple that.
      }, 120_000);
    }
  }
});
