/**
 * Every main screen in light and dark, at laptop and phone width, saved under test-results/ to be looked
 * at; each screen must render its own content, fit the width it is given, and draw no complaint from the
 * browser (errors or CSP refusals).
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Bootstrapped,
  chromiumAvailable,
  launchChromium,
  openPage,
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

describe.runIf(chromiumAvailable())("every main screen, light and dark, laptop and phone", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let cookie: string;
  let projectPath: string;

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    browser = await launchChromium();
    cookie = await ownerSession(server, "screens passphrase");
    projectPath = `/p/${server.projectId}`;
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name: "Support assistant",
      description: "Answers questions about orders, shipping and returns.",
      sections: SECTIONS,
      message: "First version",
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
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const screens: { name: string; path: () => string; signedIn: boolean; shows: string }[] = [
    { name: "sign-in", path: () => "/sign-in", signedIn: false, shows: "Sign in" },
    { name: "prompts", path: () => `${projectPath}/prompts`, signedIn: true, shows: "Support assistant" },
    { name: "new-prompt", path: () => `${projectPath}/prompts/new`, signedIn: true, shows: "New prompt" },
    { name: "editor", path: () => `${projectPath}/prompts/support-assistant`, signedIn: true, shows: "Tools" },
    {
      name: "history",
      path: () => `${projectPath}/prompts/support-assistant/history`,
      signedIn: true,
      shows: "Compare versions",
    },
    {
      name: "preview",
      path: () => `${projectPath}/prompts/support-assistant/preview`,
      signedIn: true,
      shows: "Copy curl",
    },
    { name: "settings", path: () => `${projectPath}/settings`, signedIn: true, shows: "API keys" },
    { name: "audit", path: () => `${projectPath}/audit`, signedIn: true, shows: "Audit trail" },
    { name: "account", path: () => "/account", signedIn: true, shows: "Change password" },
  ];

  for (const [viewport, size] of Object.entries(VIEWPORTS)) {
    for (const scheme of ["light", "dark"] as const) {
      it(`${viewport}, ${scheme}`, async () => {
        const context = await browser.newContext({ viewport: size, colorScheme: scheme });
        const { page, problems } = await openPage(context);
        try {
          for (const screen of screens) {
            await context.clearCookies();
            if (screen.signedIn) await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
            await page.goto(`${server.url}${screen.path()}`);
            await page.getByText(screen.shows, { exact: false }).first().waitFor();
            // Lazy parts (the code editor) settle before the picture is taken.
            await page.waitForLoadState("networkidle");
            await screenshot(page, `screen-${viewport}-${scheme}-${screen.name}`);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            expect(overflow, `${screen.name} is wider than the ${viewport} screen`).toBeLessThanOrEqual(0);
          }
          expect(problems).toEqual([]);
        } finally {
          await context.close();
        }
      });
    }
  }
});
