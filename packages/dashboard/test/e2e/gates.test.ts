/**
 * Required evaluations end to end (issue 39), in Chromium against the real binary and the OpenAI stand-in in
 * `compute` mode (it answers the system prompt in capitals, so every verdict is known): two people, two browser
 * contexts. The owner protects production and gives it a required evaluation in Settings → Labels (a refused
 * pass rate shows beside its field); the editor requests a release of a new version; the owner sees Approve
 * disabled with the reason (not evaluated); the editor runs the required evaluation from the request and watches
 * it run and pass; the owner sees it passed and approves, and a REST read serves the new version. Then a version
 * that fails: its request shows the thresholds missed and Approve stays disabled. Screenshots and axe of each
 * state (not evaluated, running, passed, failed), light and dark, laptop and phone.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandIn, startStandIn } from "../../../server/test/support/openai-stand-in.js";
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

const PASSWORD = "gates passphrase";
const EDITOR = "editor@example.com";
const PROVIDER_KEY = "sk-e2e-gates-5c2e";
const CASES = [{ vars: { customer: "Ada" } }, { vars: { customer: "Bob" } }];
/**
 * The model's answers wait until the running state has been seen in every theme and width (a fixed delay ran
 * out on a loaded machine before the last screenshot); `answer()` lets them go.
 */
let answer: () => void = () => {};
const answersHeld = new Promise<void>((resolve) => {
  answer = resolve;
});

const poll = <T>(read: () => T | Promise<T>, timeout = 20_000) => expect.poll(read, { timeout, interval: 200 });
const capitals = (body: Record<string, any>) => ({ content: String(body.messages[0].content).toUpperCase() });

interface Person {
  context: BrowserContext;
  page: Page;
  problems: string[];
  cookie: string;
}

describe.runIf(chromiumAvailable())("the dashboard, end to end: a label's required evaluation", () => {
  let server: Bootstrapped;
  let standIn: StandIn;
  let browser: Browser;
  let owner: Person;
  let editor: Person;
  /** The owner's screen in the other themes and widths, for the screenshots of each state. */
  const others: { name: string; page: Page }[] = [];
  let projectPath = "";
  let production = "";
  let kind = "";
  let rude = "";
  let datasetId = "";
  let connectionId = "";

  const short = (hash: string) => hash.slice(0, 7);
  const read = async (query = "") =>
    (await rest(server, "GET", `/api/v2/prompts/support${query}`)).body.data as { version: string };

  async function signedIn(
    cookie: string,
    viewport: { width: number; height: number } = VIEWPORTS.laptop,
    colorScheme: "light" | "dark" = "light",
  ) {
    const context = await browser.newContext({ viewport, colorScheme });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    const { page, problems } = await openPage(context);
    page.setDefaultTimeout(20_000);
    return { context, page, problems, cookie };
  }

  async function asPerson(person: Person, method: string, path: string, body?: unknown) {
    const session = (await (
      await fetch(`${server.url}/api/dashboard/session`, { headers: { cookie: `ps_session=${person.cookie}` } })
    ).json()) as { data: { csrf_token: string; memberships: { org: { id: string } }[] } };
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        cookie: `ps_session=${person.cookie}`,
        "x-csrf-token": session.data.csrf_token,
      },
      ...(method === "GET" ? {} : { body: JSON.stringify(body ?? {}) }),
    });
    return { status: res.status, body: (await res.json()) as any, orgId: session.data.memberships[0]!.org.id };
  }

  const releasesOf = (page: Page) => page.goto(`${projectPath}/releases`);
  const requestOf = (page: Page, message: string) => page.getByRole("article").filter({ hasText: message });
  const gateOf = (page: Page, message: string) =>
    requestOf(page, message).getByRole("region", { name: "Required evaluation" });

  /** The owner's Releases screen in dark and at phone width, each checked by axe and kept as a screenshot. */
  async function everyTheme(state: string, message: string, expected: string) {
    for (const other of others) {
      await releasesOf(other.page);
      await poll(() => gateOf(other.page, message).getByText(expected, { exact: true }).count()).toBe(1);
      await expectAccessible(other.page, `gates-${state}-${other.name}`);
      await screenshot(other.page, `gates-${state}-${other.name}`);
      const overflow = await other.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    }
  }

  beforeAll(async () => {
    standIn = await startStandIn(PROVIDER_KEY);
    standIn.on("caps", { kind: "compute", answer: capitals, until: answersHeld });
    server = await startFreshServer({ PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" });
    projectPath = `${server.url}/p/${server.projectId}`;
    browser = await launchChromium();
    owner = await signedIn(await ownerSession(server, PASSWORD));
    const orgId = (await asPerson(owner, "GET", "/api/dashboard/session")).orgId;
    const added = await operatorAddsMember(server, orgId, EDITOR, "editor");
    editor = await signedIn(
      await ownerSession({ ...server, owner: { email: EDITOR, password: added.password } }, PASSWORD),
    );
    for (const [viewport, scheme] of [
      ["laptop", "dark"],
      ["phone", "light"],
      ["phone", "dark"],
    ] as const)
      others.push({
        name: `${viewport}-${scheme}`,
        page: (await signedIn(owner.cookie, VIEWPORTS[viewport], scheme)).page,
      });

    const connection = await asPerson(owner, "POST", `/api/dashboard/projects/${server.projectId}/connections`, {
      name: "Stand-in",
      base_url: standIn.baseUrl,
      api_key: PROVIDER_KEY,
      models: ["caps"],
    });
    expect(connection.status).toBe(201);
    connectionId = connection.body.data.id;
    const dataset = await rest(server, "POST", "/api/v2/datasets", server.key, { name: "customers", cases: CASES });
    expect(dataset.status).toBe(201);
    datasetId = dataset.body.data.id;
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      publish: true,
    });
    expect(created.status).toBe(201);
    production = created.body.data.version;
    const save = async (content: string) => {
      const saved = await rest(server, "PUT", "/api/v2/prompts/support", server.key, {
        sections: [{ title: "Role", content }],
      });
      expect(saved.status).toBe(200);
      return saved.body.data.version as string;
    };
    kind = await save("You help {{ customer }} kindly.");
    rude = await save("You ignore {{ customer }}.");
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await standIn?.close();
  });

  it("the owner protects production and sets its required evaluation in Settings → Labels", async () => {
    const { page } = owner;
    await page.goto(`${projectPath}/settings`);
    const card = page.getByRole("region", { name: "Labels" });
    await card.getByRole("button", { name: "Edit production" }).click();
    const dialog = page.getByRole("dialog", { name: "Label production" });
    await dialog.getByRole("checkbox", { name: /^Protected/ }).check();
    await dialog.getByRole("checkbox", { name: /^Required evaluation/ }).check();
    await dialog.getByLabel("Dataset", { exact: true }).selectOption(datasetId);
    // Refused by the server (no such judge prompt), beside the field it names.
    const checks = dialog.getByLabel("Checks (JSON)");
    await checks.fill('[{ "type": "judge", "prompt": "no-such-grader" }]');
    await dialog.getByLabel("Connection").selectOption({ label: "Stand-in" });
    await dialog.getByLabel("Minimum pass rate").fill("1");
    await dialog.getByRole("button", { name: "Save" }).click();
    await poll(() => checks.getAttribute("aria-invalid")).toBe("true");
    const checksError = (await checks.getAttribute("aria-describedby"))?.split(" ") ?? [];
    const described = await Promise.all(checksError.map((id) => dialog.locator(`[id="${id}"]`).textContent()));
    expect(described.some((text) => text?.includes('no prompt "no-such-grader" in this project'))).toBe(true);
    await screenshot(page, "gates-01a-label-dialog-server-error");
    await checks.fill('[{ "type": "contains", "value": "HELP" }]');
    await dialog.getByLabel("Connection").selectOption({ label: "Stand-in" });
    await dialog.getByLabel("Model name").fill("caps");
    await dialog.getByLabel("Minimum pass rate").fill("2");
    expect(await dialog.getByRole("checkbox", { name: /^Rollbacks to a version/ }).isChecked()).toBe(true);
    await dialog.getByRole("button", { name: "Save" }).click();
    // Refused before it is sent, beside the field it names, in the server's words.
    const rate = dialog.getByLabel("Minimum pass rate");
    await poll(() => dialog.getByText("must be 0 to 1").count()).toBe(1);
    expect(await rate.getAttribute("aria-invalid")).toBe("true");
    await expectAccessible(page, "gates-label-dialog-error");
    await screenshot(page, "gates-01-label-dialog-error");
    await rate.fill("1");
    await dialog.getByRole("button", { name: "Save" }).click();
    await poll(() => dialog.count()).toBe(0);

    const row = card.getByRole("row").filter({ hasText: "production" });
    await poll(() => row.getByText("gated").count()).toBe(1);
    expect(await row.getByText("≥ 100% pass").count()).toBe(1);
    await expectAccessible(page, "gates-settings-labels");
    await screenshot(page, "gates-02-settings-labels");
    const label = (await rest(server, "GET", "/api/v2/labels/production")).body.data;
    expect(label.required_evaluation).toEqual({
      dataset: datasetId,
      checks: [{ type: "contains", value: "HELP" }],
      connection: connectionId,
      model: { name: "caps" },
      min_pass_rate: 1,
    });
    expect(label.rollback_allowed).toBe(true);
  });

  it("the editor requests a release of the new version; the owner sees Approve disabled: not evaluated", async () => {
    const { page } = editor;
    await page.goto(`${projectPath}/prompts/support/history`);
    const row = page
      .getByRole("region", { name: "Versions" })
      .getByRole("row")
      .filter({ hasText: short(kind) });
    await row.getByRole("button", { name: "Request production release" }).click();
    const ask = page.getByRole("dialog", { name: "Request a release of production" });
    await ask.getByLabel("Message").fill("Kinder");
    await ask.getByRole("button", { name: "Request release" }).click();
    await poll(() => page.getByText("Release requested: production to", { exact: false }).count()).toBe(1);

    await releasesOf(owner.page);
    const gate = gateOf(owner.page, "Kinder");
    await poll(() => gate.getByText("not evaluated", { exact: true }).count()).toBe(1);
    const approve = requestOf(owner.page, "Kinder").getByRole("button", { name: "Approve" });
    expect(await approve.isDisabled()).toBe(true);
    const reason = `Approve waits until ${short(kind)} passes production's required evaluation: not evaluated.`;
    const describedBy = (await approve.getAttribute("aria-describedby")) ?? "";
    expect(await owner.page.locator(`[id="${describedBy}"]`).textContent()).toBe(reason);
    expect(await requestOf(owner.page, "Kinder").getByText(reason).isVisible()).toBe(true);
    await expectAccessible(owner.page, "gates-not-evaluated");
    await screenshot(owner.page, "gates-03-not-evaluated-laptop-light");
    await everyTheme("not-evaluated", "Kinder", "not evaluated");
  });

  it("the editor runs the required evaluation from the request and watches it run, then pass", async () => {
    const { page } = editor;
    await releasesOf(page);
    const gate = gateOf(page, "Kinder");
    await gate.getByRole("button", { name: "Run required evaluation" }).click();
    try {
      await gate.getByRole("progressbar").waitFor();
      await poll(() => gate.getByText("running", { exact: true }).count()).toBe(1);
      await expectAccessible(page, "gates-running");
      await screenshot(page, "gates-04-running-laptop-light");
      await everyTheme("running", "Kinder", "running");
    } finally {
      answer();
    }
    await poll(() => gate.getByText("passed", { exact: true }).count(), 30_000).toBe(1);
    expect(await gate.getByText("100%").count()).toBe(1);
    await expectAccessible(page, "gates-passed-editor");
    await screenshot(page, "gates-05-passed-editor");
    expect(editor.problems).toEqual([]);
  });

  it("the owner sees it passed and approves; the read serves the new version", async () => {
    const { page } = owner;
    await releasesOf(page);
    const gate = gateOf(page, "Kinder");
    await poll(() => gate.getByText("passed", { exact: true }).count()).toBe(1);
    expect(await gate.getByRole("link", { name: "Open the evaluation" }).getAttribute("href")).toMatch(
      /\/prompts\/support\/evaluate\?evaluation=ev_/,
    );
    const approve = requestOf(page, "Kinder").getByRole("button", { name: "Approve" });
    expect(await approve.isDisabled()).toBe(false);
    expect(await approve.getAttribute("aria-describedby")).toBeNull();
    await expectAccessible(page, "gates-passed");
    await screenshot(page, "gates-06-passed-laptop-light");
    await everyTheme("passed", "Kinder", "passed");
    expect((await read("?version=production")).version).toBe(production);
    await approve.click();
    await poll(() => page.getByText(`Approved: production of support now serves ${short(kind)}.`).count()).toBe(1);
    expect((await read("?version=production")).version).toBe(kind);
  });

  it("a version that fails: the thresholds missed show, Approve stays disabled, the server refuses it", async () => {
    const asked = await asPerson(
      editor,
      "POST",
      `/api/dashboard/projects/${server.projectId}/prompts/support/releases`,
      {
        version: rude,
        label: "production",
        message: "Shorter",
      },
    );
    expect(asked.status).toBe(201);
    const { page } = editor;
    await releasesOf(page);
    const gate = gateOf(page, "Shorter");
    await gate.getByRole("button", { name: "Run required evaluation" }).click();
    await poll(() => gate.getByText("failed", { exact: true }).count(), 30_000).toBe(1);

    await releasesOf(owner.page);
    const ownerGate = gateOf(owner.page, "Shorter");
    await poll(() => ownerGate.getByText("failed", { exact: true }).count()).toBe(1);
    const reasonText = (await ownerGate.locator("p").first().textContent()) ?? "";
    expect(reasonText).toMatch(/^Failed: pass rate 0 < 1\. Open the evaluation$/);
    // Run again, a failed evaluation is reused and fails the same way: no button offers it.
    expect(await ownerGate.getByRole("button", { name: "Run required evaluation" }).count()).toBe(0);
    const approve = requestOf(owner.page, "Shorter").getByRole("button", { name: "Approve" });
    expect(await approve.isDisabled()).toBe(true);
    await expectAccessible(owner.page, "gates-failed");
    await screenshot(owner.page, "gates-07-failed-laptop-light");
    await everyTheme("failed", "Shorter", "failed");

    const refused = await asPerson(
      owner,
      "POST",
      `/api/dashboard/projects/${server.projectId}/releases/${asked.body.data.id}/approve`,
    );
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(
      new RegExp(`^label: production requires a passing evaluation of ${rude.slice(0, 12)}`),
    );
    expect((await read("?version=production")).version).toBe(kind);
    // The one console line the browser wrote: the refused requirement's 400 in Settings, shown and handled there.
    expect(owner.problems).toEqual([expect.stringMatching(/status of 400/)]);
  });
});
