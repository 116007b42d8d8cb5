/**
 * Evaluations end to end (issue 38), in Chromium against the real binary and the OpenAI stand-in in `compute`
 * mode, which answers the system prompt it was sent in capitals, so every verdict is known exactly: the owner
 * imports a JSONL file as a dataset, edits it (a version, and "no change"), compares two versions; evaluates the
 * editor's unsaved draft against production and reads the regressions (exact counts, the answer on click);
 * saves the check set as the prompt's default and the draft as a version; the same evaluation again is reused;
 * a slow one is stopped; a refused start and an unreadable evaluation show their errors; the release request
 * shows the evaluation. Screenshots and axe of every state, in light and dark, laptop and phone.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandIn, startStandIn } from "../../../server/test/support/openai-stand-in.js";
import {
  type Bootstrapped,
  chromiumAvailable,
  expectAccessible,
  launchChromium,
  openPage,
  ownerSession,
  rest,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const PASSWORD = "evaluations passphrase";
const PROVIDER_KEY = "sk-e2e-evaluations-4b1d";
/** Four cases: on "assist", Ada and Cy regress, Bob improves, Dee fails on both. */
const CASES = [
  { vars: { customer: "Ada" }, expected: "<ROLE>\nYOU HELP ADA.\n</ROLE>" },
  { vars: { customer: "Bob" }, expected: "<ROLE>\nYOU ASSIST BOB.\n</ROLE>" },
  { vars: { customer: "Cy" }, expected: "<ROLE>\nYOU HELP CY.\n</ROLE>", tags: ["vip"] },
  { vars: { customer: "Dee" }, expected: "nothing like it" },
];

const poll = <T>(read: () => T | Promise<T>, options: { timeout?: number; interval?: number } = {}) =>
  expect.poll(read, { timeout: 15_000, ...options });

const capitals = (body: Record<string, any>) => ({ content: String(body.messages[0].content).toUpperCase() });

describe.runIf(chromiumAvailable())("the dashboard, end to end: datasets and evaluations", () => {
  let server: Bootstrapped;
  let standIn: StandIn;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let cookie: string;
  let csrf: string;
  let projectPath = "";
  let production = "";
  let datasetId = "";
  let firstVersion = "";
  let evaluationId = "";
  let draftVersion = "";
  let reusedId = "";
  let stoppedId = "";
  const file = join(mkdtempSync(join(tmpdir(), "promptstore-e2e-cases-")), "customers.jsonl");

  /** A dashboard request as the signed-in owner (what Settings would do), for the steps this test does not show. */
  const dashboard = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/dashboard/projects/${server.projectId}${path}`, {
      method,
      headers: { cookie: `ps_session=${cookie}`, "x-csrf-token": csrf, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const main = () => page.getByRole("main");
  const evaluate = () => page.getByRole("region", { name: "Evaluate" });
  const results = () => page.getByRole("region", { name: /^Results/ });
  const caseRows = () => results().getByRole("table").locator("tbody tr");

  beforeAll(async () => {
    standIn = await startStandIn(PROVIDER_KEY);
    // A few hundred milliseconds an answer: long enough to see an evaluation run, short enough to wait for.
    standIn.on("caps", { kind: "compute", answer: capitals, delayMs: 250 });
    standIn.on("slow-caps", { kind: "compute", answer: capitals, delayMs: 600 });
    server = await startFreshServer({ PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" });
    projectPath = `${server.url}/p/${server.projectId}`;
    cookie = await ownerSession(server, PASSWORD);
    const session = await fetch(`${server.url}/api/dashboard/session`, { headers: { cookie: `ps_session=${cookie}` } });
    csrf = ((await session.json()) as { data: { csrf_token: string } }).data.csrf_token;
    const connection = await dashboard("POST", "/connections", {
      name: "Stand-in",
      base_url: standIn.baseUrl,
      api_key: PROVIDER_KEY,
      models: ["caps", "slow-caps"],
    });
    expect(connection.status).toBe(201);
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      publish: true,
    });
    expect(created.status).toBe(201);
    production = created.body.data.version;
    writeFileSync(file, `${CASES.map((c) => JSON.stringify(c)).join("\n")}\n`);

    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    ({ page, problems } = await openPage(context));
    page.setDefaultTimeout(15_000);
    page.on("dialog", (dialog) => problems.push(`unexpected dialog: ${dialog.type()} ${dialog.message()}`));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await standIn?.close();
  });

  it("Datasets is in the project's navigation, and says what a dataset is while there are none (empty state)", async () => {
    await page.goto(`${projectPath}/prompts`);
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Datasets" }).click();
    await page.waitForURL(`${projectPath}/datasets`);
    await main().getByRole("heading", { name: "No datasets yet" }).waitFor();
    await expectAccessible(page, "datasets-empty");
    await screenshot(page, "evaluations-01-datasets-empty");
  });

  it("creates a dataset by importing a JSONL file: previewed first, then streamed to the server", async () => {
    await main().getByRole("button", { name: "New dataset" }).click();
    const dialog = page.getByRole("dialog", { name: "New dataset" });
    await dialog.getByLabel("Name").fill("customers");
    await dialog.getByLabel("Description").fill("Four customers, one a VIP");
    expect(await dialog.getByLabel("Cases").inputValue()).toBe("file");
    await dialog.getByLabel("File").setInputFiles(file);
    const preview = dialog.getByRole("region", { name: "Preview" });
    await poll(() => preview.getByText("4 cases.").count()).toBe(1);
    expect(await preview.locator("tbody tr").count()).toBe(4);
    expect(await preview.locator("thead th").allTextContents()).toEqual(["Line", "customer", "Expected", "Tags"]);
    await expectAccessible(page, "datasets-import-preview");
    await screenshot(page, "evaluations-02-import-preview");

    const sent = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/datasets/import?"));
    await dialog.getByRole("button", { name: "Import" }).click();
    const request = await sent;
    expect(request.headers()["content-type"]).toBe("application/x-ndjson");
    expect(new URL(request.url()).searchParams.get("name")).toBe("customers");
    await page.waitForURL(/\/datasets\/ds_[0-9a-f]{24}$/);
    datasetId = page.url().split("/").pop() as string;

    const listed = await rest(server, "GET", "/api/v2/datasets");
    expect(listed.body.data.datasets).toMatchObject([{ id: datasetId, name: "customers", cases: 4 }]);
    firstVersion = listed.body.data.datasets[0].version;
    await poll(() => main().getByRole("status").textContent()).toBe(
      `Created “customers” with 4 cases (version ${firstVersion.slice(0, 7)}).`,
    );
    const cases = main().getByRole("region", { name: "Cases" });
    expect(await cases.locator("tbody tr").count()).toBe(4);
    expect(await cases.locator("thead th").allTextContents()).toEqual(["#", "customer", "Expected", "Tags", "Actions"]);
    expect(await cases.locator("tbody tr").nth(2).locator("td").nth(3).textContent()).toBe("vip");
    await expectAccessible(page, "dataset-page");
    await screenshot(page, "evaluations-03-dataset");
  });

  it("edits a case (a new version), saves it unchanged (no change), adds one and compares versions by case", async () => {
    const cases = main().getByRole("region", { name: "Cases" });
    const status = () => main().getByRole("status").first().textContent();
    // Unchanged: the same cases are the same version, so none is made.
    await cases.getByRole("button", { name: "Edit case 4" }).click();
    let dialog = page.getByRole("dialog", { name: "Edit case 4" });
    expect(await dialog.getByLabel("Expected answer").inputValue()).toBe("nothing like it");
    await expectAccessible(page, "dataset-edit-case");
    await screenshot(page, "evaluations-04-edit-case");
    await dialog.getByRole("button", { name: "Save case" }).click();
    await poll(status).toBe(
      `No change: these cases are version ${firstVersion.slice(0, 7)} already, so no version was made.`,
    );

    // Changed: a new version, whose diff with the first is one case removed and one added.
    await cases.getByRole("button", { name: "Edit case 4" }).click();
    dialog = page.getByRole("dialog", { name: "Edit case 4" });
    await dialog.getByLabel("Expected answer").fill("nothing like it at all");
    await dialog.getByRole("button", { name: "Save case" }).click();
    const edited = await poll(
      async () => (await rest(server, "GET", `/api/v2/datasets/${datasetId}`)).body.data.version,
    )
      .not.toBe(firstVersion)
      .then(async () => (await rest(server, "GET", `/api/v2/datasets/${datasetId}`)).body.data.version as string);
    await poll(status).toBe(`Saved version ${edited.slice(0, 7)} (4 cases).`);

    // A case added at the end.
    await cases.getByRole("button", { name: "Add case" }).click();
    dialog = page.getByRole("dialog", { name: "Add a case" });
    expect(await dialog.getByLabel("Name 1").inputValue()).toBe("customer");
    await dialog.getByLabel("Value 1").fill("Eve");
    await dialog.getByLabel("Tags").fill("new, trial");
    await dialog.getByRole("button", { name: "Add case" }).click();
    await poll(() => cases.locator("tbody tr").count()).toBe(5);
    const third = (await rest(server, "GET", `/api/v2/datasets/${datasetId}`)).body.data;
    expect(third.cases).toBe(5);
    await poll(status).toBe(`Saved version ${third.version.slice(0, 7)} (5 cases).`);

    const versions = main().getByRole("region", { name: "Versions" });
    await poll(() => versions.locator("tbody tr").count()).toBe(3);
    const compare = versions.getByRole("form", { name: "Compare two versions" });
    await compare.getByLabel("Compare").selectOption(firstVersion);
    await compare.getByLabel("with").selectOption(third.version);
    await compare.getByRole("button", { name: "Compare" }).click();
    const diff = versions.getByRole("region", {
      name: `From ${firstVersion.slice(0, 7)} to ${third.version.slice(0, 7)}`,
    });
    await poll(() => diff.getByRole("status").textContent()).toBe("2 added, 1 removed, 3 unchanged.");
    expect(await diff.locator(".diff-cases-add li").allTextContents()).toEqual([
      '#4 customer="Dee" → "nothing like it at all"',
      '#5 customer="Eve"',
    ]);
    expect(await diff.locator(".diff-cases-del li").allTextContents()).toEqual([
      '#4 customer="Dee" → "nothing like it"',
    ]);
    await expectAccessible(page, "dataset-versions-diff");
    await screenshot(page, "evaluations-05-versions-diff");

    // Back to the first four cases, by hand: the first version again, and no new version.
    await cases.getByRole("button", { name: "Remove case 5" }).click();
    await page.getByRole("dialog", { name: "Remove case 5?" }).getByRole("button", { name: "Remove case" }).click();
    await poll(status).toBe(
      `No change: these cases are version ${edited.slice(0, 7)} already, so no version was made.`,
    );
    await cases.getByRole("button", { name: "Edit case 4" }).click();
    dialog = page.getByRole("dialog", { name: "Edit case 4" });
    await dialog.getByLabel("Expected answer").fill("nothing like it");
    await dialog.getByRole("button", { name: "Save case" }).click();
    await poll(status).toBe(
      `No change: these cases are version ${firstVersion.slice(0, 7)} already, so no version was made.`,
    );
    expect((await rest(server, "GET", `/api/v2/datasets/${datasetId}`)).body.data).toMatchObject({
      version: firstVersion,
      cases: 4,
    });

    // Export: the version's cases as JSONL, as the server stores them.
    const download = page.waitForEvent("download");
    await main().getByRole("button", { name: "Export JSONL" }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe("customers.jsonl");
  });

  it("carries the editor's unsaved draft to Evaluate, where it runs against production (running)", async () => {
    await page.goto(`${projectPath}/prompts/support`);
    const content = page.getByLabel("Content of section 1");
    await content.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("You assist {{ customer }}.");
    await poll(() => content.textContent()).toBe("You assist {{ customer }}.");
    await page.getByRole("link", { name: "Evaluate" }).click();
    await page.waitForURL(`${projectPath}/prompts/support/evaluate`);
    // No "leave without saving?": the draft came along.
    expect(await page.getByRole("dialog", { name: "Leave without saving?" }).count()).toBe(0);
    await evaluate().getByRole("form", { name: "Evaluation" }).waitFor();
    const form = evaluate().getByRole("form", { name: "Evaluation" });
    expect(await form.getByLabel("Compared with (first)").inputValue()).toBe("production");
    expect(await form.getByLabel("Version 2", { exact: true }).inputValue()).toBe("draft");
    expect(await form.getByLabel("Dataset", { exact: true }).inputValue()).toBe(datasetId);
    expect(await form.getByText("This prompt has no default checks yet.").count()).toBe(1);
    // The starting check: the case's expected answer, trimmed.
    const checks = form.getByRole("group", { name: "Checks" });
    expect(await checks.getByRole("group", { name: "Check 1: expected" }).count()).toBe(1);
    await checks.getByLabel("Add a check").selectOption("contains");
    await checks.getByRole("button", { name: "Add check" }).click();
    const contains = checks.getByRole("group", { name: "Check 2: contains" });
    await contains.getByLabel("Text").fill("YOU");
    await contains.getByLabel("Name").fill("says you");
    await form.getByLabel("Calls at once").fill("2");
    await form.getByRole("checkbox", { name: /Append the guard/ }).uncheck();
    await expectAccessible(page, "evaluate-setup");
    await screenshot(page, "evaluations-06-setup");

    const started = page.waitForRequest(
      (r) => r.method() === "POST" && r.url().endsWith("/prompts/support/evaluations"),
    );
    await form.getByRole("button", { name: "Run evaluation" }).click();
    const body = (await started).postDataJSON();
    expect(body).toEqual({
      versions: [
        "production",
        { draft: { sections: [{ title: "Role", content: "You assist {{ customer }}.", enabled: true }] } },
      ],
      dataset: datasetId,
      checks: [
        { type: "expected", trim: true },
        { type: "contains", name: "says you", value: "YOU" },
      ],
      connection: expect.stringMatching(/^con_/),
      guard: false,
      concurrency: 2,
    });
    await page.waitForURL(/evaluation=ev_[0-9a-f]{24}/);
    evaluationId = new URL(page.url()).searchParams.get("evaluation") as string;
    const progress = results().getByRole("progressbar", { name: "Answers judged" });
    await progress.waitFor();
    await expectAccessible(page, "evaluate-running");
    await screenshot(page, "evaluations-07-running");
  });

  it("reads the regressions: exact counts per version, regressions first, the answer on click", async () => {
    await poll(() => results().getByRole("status").first().textContent(), { timeout: 30_000 }).toBe(
      "done Done: 8 answers judged.",
    );
    const view = (await rest(server, "GET", `/api/v2/evaluations/${evaluationId}`)).body.data;
    expect(view.versions.map((v: any) => [v.ref, v.passed, v.failed, v.errored, v.pass_rate])).toEqual([
      ["production", 2, 2, 0, 0.5],
      ["draft", 1, 3, 0, 0.25],
    ]);
    expect(view.compare).toEqual({ regressions: 2, improvements: 1 });
    draftVersion = view.versions[1].version;
    expect(standIn.requests).toHaveLength(8);

    const scores = results().getByRole("list", { name: "Score per version" }).getByRole("listitem");
    await poll(() => scores.nth(0).locator(".eval-rate-value").textContent()).toBe("50%");
    expect(await scores.nth(1).locator(".eval-rate-value").textContent()).toBe("25%");
    expect(await scores.nth(0).getByText("2 passed · 2 failed · 0 errored").count()).toBe(1);
    expect(await scores.nth(1).getByText("2 regressions, 1 improvement").count()).toBe(1);
    // Per check: expected's mean on the draft is 0.25; "says you" passes everywhere.
    expect(await scores.nth(1).locator("dl").textContent()).toMatch(/^expected0\.25says you1tokens in \/ out/);

    // Regressions first: cases 1 and 3, then the filter shows the others.
    const filter = results().getByRole("group", { name: "Show cases" });
    expect(await filter.getByRole("radio", { name: /^Regressions/ }).isChecked()).toBe(true);
    expect(
      await filter
        .getByRole("radio", { name: /^Regressions/ })
        .locator("..")
        .textContent(),
    ).toBe("Regressions2");
    await poll(() => caseRows().count()).toBe(2);
    expect(await caseRows().locator(".eval-case-head strong").allTextContents()).toEqual(["#1", "#3"]);
    expect(await caseRows().nth(0).locator("td").nth(1).locator(".eval-cell-state").textContent()).toBe("✓ passed");
    expect(await caseRows().nth(0).locator("td").nth(2).locator(".eval-cell-state").textContent()).toBe("✗ failed");
    expect(await caseRows().nth(0).locator("td").nth(2).locator(".eval-marks li").allTextContents()).toEqual([
      "✗ expected: failed",
      "✓ says you: passed",
    ]);
    await expectAccessible(page, "evaluate-regressions");
    await screenshot(page, "evaluations-08-regressions");

    // The answer, from the keyboard: Enter opens it, Escape closes it and gives the focus back.
    const open = caseRows().nth(0).getByRole("button", { name: "Answer of case 1 on This draft" });
    await open.focus();
    await page.keyboard.press("Enter");
    const answer = page.getByRole("dialog", { name: "Case 1" });
    await answer.waitFor();
    expect(await answer.locator(".answer-text").allTextContents()).toEqual([
      "<ROLE>\nYOU HELP ADA.\n</ROLE>",
      "<ROLE>\nYOU ASSIST ADA.\n</ROLE>",
    ]);
    expect(await answer.locator(".answer-verdicts li").first().textContent()).toBe(
      '✗ failed: expected (score 0)differs at character 12: expected "<ROLE>\\nYOU HELP ADA.\\n</ROLE>", got "<ROLE>\\nYOU ASSIST ADA.\\n</ROLE>"',
    );
    await expectAccessible(page, "evaluate-answer");
    await screenshot(page, "evaluations-09-answer");
    // The same case on production, one radio away.
    await answer.getByRole("radio", { name: "production" }).check();
    await poll(() => answer.locator(".answer-text").nth(1).textContent()).toBe("<ROLE>\nYOU HELP ADA.\n</ROLE>");
    await page.keyboard.press("Escape");
    await poll(() => answer.count()).toBe(0);
    expect(await open.evaluate((el) => el === document.activeElement)).toBe(true);

    await filter.getByRole("radio", { name: /^Improvements/ }).check();
    await poll(() => caseRows().locator(".eval-case-head strong").allTextContents()).toEqual(["#2"]);
    await filter.getByRole("radio", { name: /^All/ }).check();
    await poll(() => caseRows().count()).toBe(4);
    await poll(() => caseRows().locator(".badge").allTextContents()).toEqual([
      "regression",
      "improvement",
      "regression",
    ]);
  });

  it("saves the check set (and dataset) as the prompt's default, on the server", async () => {
    const form = evaluate().getByRole("form", { name: "Evaluation" });
    await form.getByRole("button", { name: "Save as the prompt's default" }).click();
    await poll(() => form.getByText(/^Saved as this prompt's default checks/).count()).toBe(1);
    const defaults = await rest(server, "GET", "/api/v2/prompts/support/evaluation-defaults");
    expect(defaults.body.data).toMatchObject({
      prompt_id: "support",
      checks: [
        { type: "expected", trim: true },
        { type: "contains", name: "says you", value: "YOU" },
      ],
      dataset: datasetId,
      updated_by: `user:${server.owner.email}`,
    });
  });

  it("the same evaluation again is reused at once: nothing is sent to the model", async () => {
    const form = evaluate().getByRole("form", { name: "Evaluation" });
    await form.getByRole("button", { name: "Run evaluation" }).click();
    await poll(() => new URL(page.url()).searchParams.get("evaluation")).not.toBe(evaluationId);
    await poll(() => results().getByRole("status").first().textContent()).toMatch(/^reused Reused: /);
    reusedId = new URL(page.url()).searchParams.get("evaluation") as string;
    expect(await results().getByRole("link", { name: "Open the evaluation it repeats" }).getAttribute("href")).toBe(
      `/p/${server.projectId}/prompts/support/evaluate?evaluation=${evaluationId}`,
    );
    expect(standIn.requests).toHaveLength(8);
    await poll(() => caseRows().count()).toBe(2);
    await expectAccessible(page, "evaluate-reused");
    await screenshot(page, "evaluations-10-reused");
  });

  it("saves the draft as a version from Evaluate: the version has the hash the draft was evaluated under", async () => {
    await results().getByRole("button", { name: "Save the draft as a version…" }).click();
    const dialog = page.getByRole("dialog", { name: "Save the draft as a version" });
    await dialog.getByLabel("Message").fill("Assist, not help");
    await dialog.getByRole("button", { name: "Save version" }).click();
    await poll(() => main().getByRole("status").first().textContent()).toBe(
      `Saved version ${draftVersion.slice(0, 7)}: the draft evaluated here.`,
    );
    const versions = (await rest(server, "GET", "/api/v2/prompts/support/versions")).body.data;
    expect(versions.latest_version).toBe(draftVersion);
    expect(versions.production_version).toBe(production);
    expect(versions.versions[0]).toMatchObject({ version: draftVersion, message: "Assist, not help" });
    // The draft is saved: Evaluate offers latest now, and the editor shows the saved version without asking.
    await poll(() => evaluate().getByLabel("Version 2", { exact: true }).inputValue()).toBe("latest");
    await page.getByRole("link", { name: "Edit" }).click();
    await poll(() => page.getByLabel("Content of section 1").textContent()).toBe("You assist {{ customer }}.");
    expect(await page.getByText("Unsaved changes").count()).toBe(0);
  });

  it("starts from the prompt's default checks; a slow evaluation is stopped (stopped)", async () => {
    await page.getByRole("link", { name: "Evaluate" }).click();
    const form = evaluate().getByRole("form", { name: "Evaluation" });
    await form.waitFor();
    expect(await form.getByText(/^These are this prompt's default checks, saved by/).count()).toBe(1);
    expect(await form.getByRole("group", { name: "Check 2: says you" }).getByLabel("Text").inputValue()).toBe("YOU");
    await form.getByLabel(/^Model/).fill("slow-caps");
    await form.getByLabel("Calls at once").fill("1");
    await form.getByRole("checkbox", { name: /Append the guard/ }).uncheck();
    await form.getByRole("button", { name: "Run evaluation" }).click();
    // Stopped once the first answer is judged: what was judged stays, the rest is pending.
    const bar = results().getByRole("progressbar", { name: "Answers judged" });
    await poll(async () => Number((await bar.getAttribute("value")) ?? 0), { timeout: 30_000 }).toBeGreaterThanOrEqual(
      1,
    );
    await results().getByRole("button", { name: "Stop" }).click();
    await poll(() => results().getByRole("status").first().textContent(), { timeout: 20_000 }).toMatch(
      /^stopped Stopped with [1-4] cases? not judged\. What was judged is kept: running it again asks only the rest\.$/,
    );
    stoppedId = new URL(page.url()).searchParams.get("evaluation") as string;
    const stopped = (await rest(server, "GET", `/api/v2/evaluations/${stoppedId}`)).body.data;
    expect(stopped.status).toBe("stopped");
    expect(stopped.versions[0].pending + stopped.versions[0].passed + stopped.versions[0].failed).toBe(4);
    // At least one answer was judged before the stop, and not every one.
    const judged = stopped.versions.reduce((n: number, v: any) => n + v.passed + v.failed + v.errored, 0);
    expect(judged).toBeGreaterThanOrEqual(1);
    expect(judged).toBeLessThan(8);
    await expectAccessible(page, "evaluate-stopped");
    await screenshot(page, "evaluations-11-stopped");
  });

  it("a start the server refuses shows its reason beside the field; an unreadable evaluation says so (error)", async () => {
    const form = evaluate().getByRole("form", { name: "Evaluation" });
    const checks = form.getByRole("group", { name: "Checks" });
    await checks.getByLabel("Add a check").selectOption("regex");
    await checks.getByRole("button", { name: "Add check" }).click();
    const regex = checks.getByRole("group", { name: "Check 3: regex" });
    await regex.getByLabel("Pattern").fill("(unclosed");
    await form.getByRole("button", { name: "Run evaluation" }).click();
    await poll(() => regex.getByLabel("Pattern").getAttribute("aria-invalid")).toBe("true");
    expect(await regex.locator(".field-error").textContent()).toBe(
      "is not a pattern RE2 takes: error parsing regexp: missing closing ): `(unclosed`",
    );
    await expectAccessible(page, "evaluate-refused");
    await screenshot(page, "evaluations-12-refused");
    await regex.getByRole("button", { name: "Remove check 3" }).click();

    // The evaluation cannot be read: the error, and a way to try again.
    await page.route(`**/evaluations/${evaluationId}?*`, (route) =>
      route.fulfill({
        status: 500,
        contentType: "application/json",
        body: '{"success":false,"error":"internal error"}',
      }),
    );
    await page.goto(`${projectPath}/prompts/support/evaluate?evaluation=${evaluationId}`);
    await main().getByRole("heading", { name: "Could not load the evaluation" }).waitFor({ timeout: 30_000 });
    await expectAccessible(page, "evaluate-error");
    await screenshot(page, "evaluations-13-error");
    await page.unroute(`**/evaluations/${evaluationId}?*`);
    await main().getByRole("button", { name: "Try again" }).click();
    await poll(() => results().getByRole("status").first().textContent()).toBe("done Done: 8 answers judged.");
  });

  it("the release request shows the candidate's evaluation against what production serves", async () => {
    expect((await dashboard("PUT", "/labels/production", { protected: true })).status).toBe(200);
    const requested = await rest(server, "POST", "/api/v2/prompts/support/releases", server.key, {
      label: "production",
      version: draftVersion,
      message: "Assist customers",
    });
    expect(requested.status).toBe(201);
    await page.goto(`${projectPath}/releases`);
    const request = page.getByRole("article").filter({ hasText: "Assist customers" });
    const evaluation = request.locator(".release-evaluation");
    await poll(() => evaluation.locator("dd").allTextContents()).toEqual([
      "25% pass (1 passed, 3 failed, 0 errored)",
      "50% pass (2 passed, 2 failed, 0 errored)",
      "2 regressions, 1 improvement",
    ]);
    await expectAccessible(page, "release-evaluation");
    await screenshot(page, "evaluations-14-release");
    await evaluation.getByRole("link", { name: /^Open the evaluation/ }).click();
    await page.waitForURL(/\/prompts\/support\/evaluate\?evaluation=ev_/);
    await results().waitFor();
  });

  it("every screen in dark and at phone width, with the loading state; axe on each", async () => {
    for (const [viewport, scheme] of [
      ["laptop", "dark"],
      ["phone", "light"],
      ["phone", "dark"],
    ] as const) {
      const other = await browser.newContext({ viewport: VIEWPORTS[viewport], colorScheme: scheme });
      try {
        await other.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
        const opened = await openPage(other);
        const p = opened.page;
        p.setDefaultTimeout(15_000);
        const name = `${viewport}-${scheme}`;
        let release = () => {};
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        await p.route("**/evaluations/*/cases?*", async (route) => {
          await held;
          await route.continue();
        });
        await p.goto(`${projectPath}/prompts/support/evaluate?evaluation=${evaluationId}`);
        const region = p.getByRole("region", { name: /^Results/ });
        await region.getByText("Loading the cases…").waitFor();
        await screenshot(p, `evaluations-15-loading-${name}`);
        release();
        await poll(() => region.locator("tbody tr").count()).toBe(2);
        await expectAccessible(p, `evaluate-${name}`);
        await screenshot(p, `evaluations-16-evaluate-${name}`);
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);

        // The other states, as they show here: running (started over REST, stopped after), stopped, reused, error.
        const running = await rest(server, "POST", "/api/v2/prompts/support/evaluations", server.key, {
          versions: ["production", "latest"],
          dataset: datasetId,
          checks: [{ type: "contains", value: `screen ${name}` }],
          connection: (await dashboard("GET", "/connections")).body.data.connections[0].id,
          model: { name: "slow-caps" },
          guard: false,
          concurrency: 1,
        });
        expect(running.status).toBe(202);
        await p.goto(`${projectPath}/prompts/support/evaluate?evaluation=${running.body.data.id}`);
        await region.getByRole("progressbar", { name: "Answers judged" }).waitFor();
        await expectAccessible(p, `evaluate-running-${name}`);
        await screenshot(p, `evaluations-16b-running-${name}`);
        await rest(server, "POST", `/api/v2/evaluations/${running.body.data.id}/stop`);
        for (const [state, id] of [
          ["stopped", stoppedId],
          ["reused", reusedId],
        ] as const) {
          await p.goto(`${projectPath}/prompts/support/evaluate?evaluation=${id}`);
          await region
            .getByRole("status")
            .filter({ hasText: state === "stopped" ? "Stopped" : "Reused" })
            .waitFor();
          await expectAccessible(p, `evaluate-${state}-${name}`);
          await screenshot(p, `evaluations-16c-${state}-${name}`);
        }
        await p.route(`**/evaluations/${evaluationId}?*`, (route) =>
          route.fulfill({
            status: 500,
            contentType: "application/json",
            body: '{"success":false,"error":"internal error"}',
          }),
        );
        await p.goto(`${projectPath}/prompts/support/evaluate?evaluation=${evaluationId}`);
        await p.getByRole("heading", { name: "Could not load the evaluation" }).waitFor({ timeout: 30_000 });
        await expectAccessible(p, `evaluate-error-${name}`);
        await screenshot(p, `evaluations-16d-error-${name}`);
        await p.unroute(`**/evaluations/${evaluationId}?*`);

        await p.goto(`${projectPath}/datasets`);
        await p.getByRole("link", { name: "customers" }).waitFor();
        await expectAccessible(p, `datasets-${name}`);
        await screenshot(p, `evaluations-17-datasets-${name}`);
        await p.getByRole("link", { name: "customers" }).click();
        await p.getByRole("region", { name: "Cases" }).locator("tbody tr").first().waitFor();
        await expectAccessible(p, `dataset-${name}`);
        await screenshot(p, `evaluations-18-dataset-${name}`);
        expect(await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);

        await p.goto(`${projectPath}/releases`);
        await p.locator(".release-evaluation dd").first().waitFor();
        await expectAccessible(p, `release-evaluation-${name}`);
        await screenshot(p, `evaluations-19-release-${name}`);
        // The one complaint: the evaluation the test made unreadable (read again twice before giving up).
        expect([...new Set(opened.problems)]).toEqual([
          "Failed to load resource: the server responded with a status of 500 (Internal Server Error)",
        ]);
      } finally {
        await other.close();
      }
    }
  }, 300_000);

  it("the browser reported no errors but the refusals it was shown", () => {
    const refused = [
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
      "Failed to load resource: the server responded with a status of 500 (Internal Server Error)",
    ];
    expect(problems.filter((p) => !refused.includes(p))).toEqual([]);
  });
});
