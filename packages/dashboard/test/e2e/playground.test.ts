/**
 * The playground end to end (issue 21), in Chromium against the real binary and the one stand-in of the
 * playground's tests, a real HTTP server speaking OpenAI's chat-completions protocol
 * (packages/server/test/support/openai-stand-in.js): the owner adds a model connection; the editor's unsaved
 * draft runs next to production on the same variables and chat, streaming; provider failures read as
 * messages next to the run; a run is stopped; a run is saved as an example, all examples run on two versions,
 * and the kept results are still there after a reload. The provider key is never in the browser: not in
 * the page, not in any answer it received, not in its storage. Screenshots and axe in light and dark, laptop
 * and phone; empty, loading and error states; the keyboard alone runs and stops.
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
  ownerSession,
  rest,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const PASSWORD = "playground passphrase";
const PROVIDER_KEY = "sk-e2e-provider-key-7f3a9c1e5b";
const MODEL = "stand-in-model";
const PIECES = ["Hello", " from", " the", " stand-in."];

/** `expect.poll` with room for a loaded machine: a step that never happens still fails, after 10 s. */
const poll = <T>(read: () => T | Promise<T>, options: { timeout?: number; interval?: number } = {}) =>
  expect.poll(read, { timeout: 10_000, ...options });

describe.runIf(chromiumAvailable())("the dashboard, end to end: the playground", () => {
  let server: Bootstrapped;
  let standIn: StandIn;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let cookie: string;
  let projectPath = "";
  const bodies: string[] = [];
  const versions: string[] = [];

  const prompt = () => page.getByRole("region", { name: "Playground" });
  const side = (name: string) => prompt().getByRole("region", { name, exact: true });

  beforeAll(async () => {
    standIn = await startStandIn(PROVIDER_KEY);
    standIn.on(MODEL, {
      kind: "stream",
      pieces: PIECES,
      delayMs: 120,
      usage: { prompt_tokens: 31, completion_tokens: 4 },
    });
    standIn.on("slow-model", { kind: "stream", pieces: ["One", " two", " three", " four"], delayMs: 4000 });
    standIn.on("busy-model", { kind: "error", status: 429 });
    standIn.on("tool-model", {
      kind: "stream",
      toolCalls: [{ id: "call_e2e_1", name: "order_status", argumentPieces: ['{"order":', '"A-17"}'] }],
      usage: { prompt_tokens: 40, completion_tokens: 9 },
    });
    // The stand-in listens on 127.0.0.1: the one setting that lets a connection reach a local model.
    server = await startFreshServer({ PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" });
    projectPath = `${server.url}/p/${server.projectId}`;
    cookie = await ownerSession(server, PASSWORD);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    ({ page, problems } = await openPage(context));
    // A step that cannot happen fails in seconds, naming the step, instead of at the test's timeout.
    page.setDefaultTimeout(10_000);
    page.on("dialog", (dialog) => problems.push(`unexpected dialog: ${dialog.type()} ${dialog.message()}`));
    // Every answer the browser receives, kept to look for the provider key in.
    page.on("response", async (response) => {
      try {
        bodies.push(`${response.url()}\n${JSON.stringify(await response.allHeaders())}\n${await response.text()}`);
      } catch {
        // A body the browser no longer holds (a redirect, a stream it cancelled).
      }
    });

    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name: "Support Bot",
      markdown: "# Role\nYou help customers of {{ company }}.\n\n# Rules\nBe brief.",
      publish: true,
    });
    expect(created.status).toBe(201);
    versions.push(created.body.data.version);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await standIn?.close();
  });

  it("without a connection, the playground says where one is added (empty state)", async () => {
    await page.goto(`${projectPath}/prompts/support-bot`);
    await poll(() => prompt().getByRole("heading", { name: "No model connection yet" }).count(), {
      timeout: 15_000,
    }).toBe(1);
    expect(await prompt().getByRole("link", { name: "Add one in Settings" }).getAttribute("href")).toBe(
      `/p/${server.projectId}/settings`,
    );
    await expectAccessible(page, "playground-empty");
    await screenshot(page, "playground-01-empty");
  });

  it("the owner adds a connection in Settings; the key is a password field and is never shown again", async () => {
    await page.goto(`${projectPath}/settings`);
    const card = page.getByRole("region", { name: "Model connections" });
    await card.getByRole("heading", { name: "No model connections yet" }).waitFor();
    await card.getByRole("button", { name: "Add connection" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a model connection" });
    // A local model is refused unless the operator allows it: the field says how before anyone tries.
    expect(await dialog.getByText(/^An OpenAI-compatible API: /).textContent()).toContain(
      "is refused unless the server is started with PROMPTSTORE_MODEL_ALLOW_PRIVATE=true.",
    );
    await dialog.getByRole("button", { name: "Add connection" }).click();
    await poll(() => dialog.getByText("is required").count()).toBe(2);
    await dialog.getByLabel("Name").fill("Stand-in");
    await dialog.getByLabel("Base URL").fill("not a url");
    const key = dialog.getByLabel("API key");
    expect(await key.getAttribute("type")).toBe("password");
    await key.fill(PROVIDER_KEY);
    await dialog.getByLabel("Models").fill(`${MODEL}, slow-model\nbusy-model, tool-model`);
    await dialog.getByRole("button", { name: "Add connection" }).click();
    // The server's refusal, next to the field it names.
    await poll(() => dialog.getByLabel("Base URL").getAttribute("aria-invalid")).toBe("true");
    await expectAccessible(page, "connections-dialog-error");
    await screenshot(page, "connections-01-dialog-error");
    await dialog.getByLabel("Base URL").fill(standIn.baseUrl);
    await dialog.getByRole("button", { name: "Add connection" }).click();
    await poll(() => dialog.count()).toBe(0);

    const row = card.getByRole("row").filter({ hasText: "Stand-in" });
    await poll(() => row.getByText("stored, hidden").count()).toBe(1);
    expect(await row.getByText(standIn.baseUrl).count()).toBe(1);
    expect(await row.locator(".badge.mono").allTextContents()).toEqual([
      MODEL,
      "slow-model",
      "busy-model",
      "tool-model",
    ]);
    expect(await page.content()).not.toContain(PROVIDER_KEY);
    // The id a run through the API names, shown under the name with a button that copies it.
    const connectionId = await row.locator(".connection-id code").textContent();
    expect(connectionId).toMatch(/^con_[0-9a-f]{24}$/);
    await row.getByRole("button", { name: "Copy id of Stand-in" }).click();
    await poll(() => row.getByRole("status").textContent()).toBe("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(connectionId);
    await expectAccessible(page, "connections-list");
    await screenshot(page, "connections-02-list");

    // Edited: the fields as they are, the key kept unless replaced (the runs below still pass the stand-in's
    // key check), only what changed is sent.
    await row.getByRole("button", { name: "Edit Stand-in" }).click();
    const edit = page.getByRole("dialog", { name: "Edit Stand-in" });
    expect(await edit.getByLabel("Name").inputValue()).toBe("Stand-in");
    expect(await edit.getByLabel("Base URL").inputValue()).toBe(standIn.baseUrl);
    expect(await edit.getByLabel("Models").inputValue()).toBe(`${MODEL}, slow-model, busy-model, tool-model`);
    expect(await edit.getByLabel("New API key").inputValue()).toBe("");
    expect(await edit.getByText("A key is stored, encrypted; it is never shown.", { exact: false }).count()).toBe(1);
    expect(await edit.getByLabel("Remove the stored key", { exact: false }).isChecked()).toBe(false);
    await expectAccessible(page, "connections-edit-dialog");
    await screenshot(page, "connections-02b-edit");
    const sent = page.waitForRequest((r) => r.method() === "PATCH" && r.url().includes("/connections/"));
    await edit.getByLabel("Models").fill(`${MODEL}, slow-model, busy-model, tool-model, spare-model`);
    await edit.getByRole("button", { name: "Save changes" }).click();
    expect((await sent).postDataJSON()).toEqual({
      models: [MODEL, "slow-model", "busy-model", "tool-model", "spare-model"],
    });
    await poll(() => edit.count()).toBe(0);
    await poll(() => row.locator(".badge.mono").allTextContents()).toEqual([
      MODEL,
      "slow-model",
      "busy-model",
      "tool-model",
      "spare-model",
    ]);
    expect(await row.getByText("stored, hidden").count()).toBe(1);
  });

  it("fills variables, runs the unsaved draft next to production, and the answers stream token by token", async () => {
    await page.goto(`${projectPath}/prompts/support-bot`);
    // An unsaved change to the draft: it runs as it is in the editor.
    const rules = page.getByLabel("Content of section 2");
    await rules.click();
    await page.keyboard.press("ControlOrMeta+End");
    await page.keyboard.type(" Be kind.");
    await poll(() => rules.textContent()).toBe("Be brief. Be kind.");
    await prompt().getByLabel("Run", { exact: true }).waitFor();
    expect(await prompt().getByLabel("Run", { exact: true }).inputValue()).toBe("draft");
    expect(await prompt().getByLabel("Compare with").inputValue()).toBe("production");
    await prompt().getByLabel("company").fill("Acme");
    await prompt().getByLabel("Message 1 (user)").fill("Where is my order?");
    await prompt().locator("summary").click();
    await prompt().getByLabel("Model", { exact: true }).fill(MODEL);
    await prompt().getByLabel("Temperature").fill("0.3");
    // Every text the draft's answer shows, in order, recorded in the page as it changes.
    await side("This draft").evaluate((section) => {
      const seen: string[] = [];
      (window as any).__seen = seen;
      new MutationObserver(() => {
        const text = section.querySelector(".run-text")?.textContent ?? "";
        if (text !== "" && seen.at(-1) !== text) seen.push(text);
      }).observe(section, { subtree: true, childList: true, characterData: true });
    });
    await prompt().getByRole("button", { name: "Run both" }).click();
    // Mid-stream: part of the answer shows while the rest has not left the stand-in.
    await poll(() => side("This draft").locator(".run-text").textContent()).toMatch(/^Hello/);
    await screenshot(page, "playground-02-streaming");
    for (const name of ["This draft", "production"]) {
      // The last piece shows a moment before `done` brings the timings and usage.
      await poll(() => side(name).getByRole("status").allTextContents()).toEqual(["The answer is complete."]);
      expect(await side(name).locator(".run-text").textContent()).toBe(PIECES.join(""));
      expect(await side(name).locator(".run-facts dt").allTextContents()).toEqual(["First token", "Total", "Tokens"]);
      expect(await side(name).locator(".run-facts dd").nth(2).textContent()).toBe("31 in · 4 out");
      expect(await side(name).locator(".run-facts dd").nth(0).textContent()).toMatch(/^\d+ ms$/);
    }
    // Token by token: the answer grew piece by piece as the pieces left the stand-in (350 ms apart). A busy
    // machine may paint two pieces at once, so not every step is required, but a buffered answer (one step,
    // the whole text) fails, and every step shown is whole pieces, in order.
    const steps = PIECES.map((_, i) => PIECES.slice(0, i + 1).join(""));
    const seen = (await page.evaluate(() => (window as any).__seen)) as string[];
    expect(seen.length, `steps seen: ${JSON.stringify(seen)}`).toBeGreaterThanOrEqual(3);
    expect(seen.every((text) => steps.includes(text))).toBe(true);
    expect(seen.map((text) => steps.indexOf(text))).toEqual([...seen.map((text) => steps.indexOf(text))].sort());
    expect(seen.at(-1)).toBe(PIECES.join(""));
    // The server sent each side's own system prompt, filled in, the same chat, and the overrides.
    const [draftRequest, productionRequest] = [...standIn.requests].sort((a, b) =>
      String(a.body.messages[0].content).includes("kind")
        ? -1
        : String(b.body.messages[0].content).includes("kind")
          ? 1
          : 0,
    );
    // Each is the version's assembled text with the variable filled in, then the guard (on by default).
    const [draftSystem, productionSystem] = [draftRequest!, productionRequest!].map((r) =>
      String(r.body.messages[0].content).split("\n\n<Security>\n"),
    );
    expect(draftSystem![0]).toBe(
      "<Role>\nYou help customers of Acme.\n</Role>\n\n<Rules>\nBe brief. Be kind.\n</Rules>",
    );
    expect(productionSystem![0]).toBe("<Role>\nYou help customers of Acme.\n</Role>\n\n<Rules>\nBe brief.\n</Rules>");
    expect([draftSystem!.length, productionSystem!.length]).toEqual([2, 2]);
    for (const request of [draftRequest!, productionRequest!]) {
      expect(request.body.messages.slice(1)).toEqual([{ role: "user", content: "Where is my order?" }]);
      expect(request.body).toMatchObject({ model: MODEL, temperature: 0.3, stream: true });
    }
    expect(await side("This draft").locator(".hash").textContent()).toMatch(/^draft [0-9a-f]{7}$/);
    expect(await side("production").locator(".hash").textContent()).toBe(versions[0]!.slice(0, 7));
    await expectAccessible(page, "playground-done");
    await screenshot(page, "playground-03-side-by-side");
  });

  it("shows provider failures as messages next to the run, never as a broken page", async () => {
    await prompt().getByLabel("Compare with").selectOption("");
    await prompt().getByLabel("Model", { exact: true }).fill("busy-model");
    await prompt().getByRole("button", { name: "Run", exact: true }).click();
    const alert = side("This draft").getByRole("alert");
    await poll(() => alert.locator("strong").textContent()).toBe("The provider's rate limit was reached");
    expect(await alert.textContent()).toContain("Rate limit reached for busy-model");

    await prompt().getByLabel("Model", { exact: true }).fill("no-such-model");
    await prompt().getByRole("button", { name: "Run", exact: true }).click();
    await poll(() => alert.locator("strong").textContent()).toBe("The provider does not know this model");
    expect(await alert.textContent()).toContain("The model `no-such-model` does not exist");

    // A bad override is named next to its field before anything is sent.
    const sent = standIn.requests.length;
    await prompt().getByLabel("Temperature").fill("hot");
    await prompt().getByRole("button", { name: "Run", exact: true }).click();
    await poll(() => prompt().getByText("must be a number").count()).toBe(1);
    expect(standIn.requests.length).toBe(sent);
    await prompt().getByLabel("Temperature").fill("");
    await expectAccessible(page, "playground-error");
    await screenshot(page, "playground-04-error");
  });

  it("answers a tool call and continues the chat", async () => {
    await prompt().getByLabel("Model", { exact: true }).fill("tool-model");
    await prompt().getByRole("button", { name: "Run", exact: true }).click();
    const calls = side("This draft").getByRole("form", { name: "Tool calls" });
    await poll(() => calls.locator(".tool-call-args").textContent()).toBe('{\n  "order": "A-17"\n}');
    await calls.getByLabel("Answer to order_status").fill('{"status":"shipped"}');
    standIn.on("tool-model", { kind: "stream", pieces: ["It has shipped."] });
    await calls.getByRole("button", { name: "Send the answers and continue" }).click();
    await poll(() => side("This draft").locator(".run-text").textContent()).toBe("It has shipped.");
    const last = standIn.requests.at(-1)!.body;
    expect(last.messages.slice(1)).toEqual([
      { role: "user", content: "Where is my order?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_e2e_1", type: "function", function: { name: "order_status", arguments: '{"order":"A-17"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_e2e_1", content: '{"status":"shipped"}' },
    ]);
    expect(
      await side("This draft").getByRole("list", { name: "Earlier turns" }).locator("li").allTextContents(),
    ).toEqual(["assistant called order_status", 'tool {"status":"shipped"}']);
  });

  it("runs and stops with the keyboard alone; the stopped run frees the provider's connection", async () => {
    await prompt().getByLabel("Model", { exact: true }).fill("slow-model");
    await prompt().getByLabel("Message 1 (user)").focus();
    await page.keyboard.press("Control+Enter");
    await poll(() => side("This draft").locator(".run-text").textContent(), { timeout: 10_000 }).toBe("One");
    await expectAccessible(page, "playground-running");
    await side("This draft").getByRole("button", { name: "Stop" }).focus();
    await page.keyboard.press("Enter");
    await poll(() => side("This draft").getByRole("status").allTextContents()).toEqual([
      "",
      "Stopped. The provider's request was cancelled.",
    ]);
    await standIn.waitForNoConnections(5000);
    expect(await side("This draft").locator(".run-text").textContent()).toBe("One");
  });

  it("saves a run as an example, runs all on two versions, and shows the kept results after a reload", async () => {
    await prompt().getByLabel("Model", { exact: true }).fill(MODEL);
    await prompt().getByRole("button", { name: "Save as example…" }).click();
    const dialog = page.getByRole("dialog", { name: "Save as example" });
    expect(await dialog.locator(".example-input-list li").allTextContents()).toEqual([
      "company = Acme",
      "user Where is my order?",
    ]);
    await dialog.getByLabel("Name").fill("Order status");
    await dialog.getByLabel(/What a good answer looks like/).fill("Names the order and its status");
    await expectAccessible(page, "playground-example-dialog");
    await screenshot(page, "playground-05-example-dialog");
    await dialog.getByRole("button", { name: "Save example" }).click();
    await poll(() => dialog.count()).toBe(0);

    // A second version, saved: run all compares it (latest) with production.
    await page.getByRole("button", { name: "Save version", exact: true }).click();
    await poll(() => page.getByText(/^Saved version [0-9a-f]{7}\.$/).count()).toBe(1);
    const examples = page.getByRole("region", { name: "Saved examples" });
    const example = examples.getByRole("article", { name: "Order status" });
    await poll(() => example.getByText("Not run on this version yet.").count()).toBe(2);
    const before = standIn.requests.length;
    await examples.getByRole("button", { name: "Run all 1 example" }).click();
    await poll(() => examples.getByRole("status").textContent()).toBe("Ran 2, shown from before 0.");
    expect(standIn.requests.length - before).toBe(2);
    const cells = example.locator(".result-cell");
    expect(await cells.locator(".run-text").allTextContents()).toEqual([PIECES.join(""), PIECES.join("")]);
    expect(await cells.locator(".result-ref").allTextContents()).toEqual(["latest", "production"]);
    expect(await cells.locator(".result-cell-head .subtle").first().textContent()).toMatch(
      /^ran just now · [0-9a-f]{7}$/,
    );
    await expectAccessible(page, "playground-examples");
    await screenshot(page, "playground-06-examples");

    // After a reload the kept results are there at once, labelled with when they ran; no run is made.
    await page.reload();
    await poll(() => example.locator(".result-cell-head .subtle").allTextContents(), { timeout: 15_000 }).toEqual([
      expect.stringMatching(/^kept, ran just now · [0-9a-f]{7}$/),
      expect.stringMatching(/^kept, ran just now/),
    ]);
    expect(await example.locator(".run-text").allTextContents()).toEqual([PIECES.join(""), PIECES.join("")]);
    expect(standIn.requests.length - before).toBe(2);

    // Run all again. The reload forgot the run's model override, and neither version names a model: the
    // connection's first listed model runs, the one named before, so both come from what is kept, at once.
    await prompt().locator("summary").click();
    expect(await prompt().getByLabel("Model", { exact: true }).getAttribute("placeholder")).toBe(
      `connection's first: ${MODEL}`,
    );
    await examples.getByRole("button", { name: "Run all 1 example" }).click();
    await poll(() => examples.getByRole("status").textContent()).toBe("Ran 0, shown from before 2.");
    expect(standIn.requests.length - before).toBe(2);
    await screenshot(page, "playground-07b-examples-kept");
  });

  it("the history says how many examples each version was tried on", async () => {
    await page.getByRole("link", { name: "History" }).click();
    const rows = page.getByRole("region", { name: "Versions" }).getByRole("row");
    await poll(() => rows.locator(".version-tried").allTextContents()).toEqual([
      "tried on 1 of 1 example",
      "tried on 1 of 1 example",
    ]);
    await screenshot(page, "playground-08-history");
  });

  it("a release request shows the approver the candidate's and production's answers per example", async () => {
    const latest = (await rest(server, "GET", "/api/v2/prompts/support-bot?version=latest")).body.data
      .version as string;
    const requested = await rest(server, "POST", "/api/v2/prompts/support-bot/releases", server.key, {
      label: "production",
      version: latest,
      message: "Kinder rules, tried on the examples",
    });
    expect(requested.status).toBe(201);
    await page.goto(`${projectPath}/releases`);
    const request = page.getByRole("article").filter({ hasText: "Kinder rules, tried on the examples" });
    const rows = request.getByRole("table").getByRole("row");
    await poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).getByRole("cell").allTextContents()).toEqual([
      "Order status",
      expect.stringMatching(
        new RegExp(`^${PIECES.join("").replace(".", "\\.")}${latest.slice(0, 7)} · ran (just now|\\d+ s ago)$`),
      ),
      expect.stringMatching(
        new RegExp(`^${PIECES.join("").replace(".", "\\.")}${versions[0]!.slice(0, 7)} · ran (just now|\\d+ s ago)$`),
      ),
    ]);
    expect(await request.getByRole("heading", { name: /Saved examples/ }).textContent()).toBe(
      "Saved examples (candidate tried on 1 of 1)",
    );
    await expectAccessible(page, "playground-release-examples");
    await screenshot(page, "playground-08b-release-examples");
  });

  it("edits an example with the keyboard; a rename keeps its results", async () => {
    await page.goto(`${projectPath}/prompts/support-bot`);
    const examples = page.getByRole("region", { name: "Saved examples" });
    await examples.getByRole("button", { name: "Edit Order status" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Edit example" });
    await poll(() => dialog.getByLabel("Name").evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press("Control+A");
    await page.keyboard.type("Where is my order");
    await page.keyboard.press("Enter");
    await poll(() => dialog.count()).toBe(0);
    const renamed = examples.getByRole("article", { name: "Where is my order" });
    await renamed.waitFor();
    // A rename keeps the kept results (the inputs did not change).
    await poll(() => renamed.locator(".run-text").count()).toBe(2);
    const listed = await rest(server, "GET", "/api/v2/prompts/support-bot/examples");
    expect(listed.body.data.examples.map((e: { name: string }) => e.name)).toEqual(["Where is my order"]);
  });

  it("runs all on the unsaved draft beside production; saving the draft shows its results at once", async () => {
    const rules = page.getByLabel("Content of section 2");
    await rules.click();
    await page.keyboard.press("ControlOrMeta+End");
    await page.keyboard.type(" Always.");
    await poll(() => rules.textContent()).toBe("Be brief. Be kind. Always.");
    // The page was loaded afresh: the run's model is named again, as the kept production result was run.
    await prompt().locator("summary").click();
    await prompt().getByLabel("Model", { exact: true }).fill(MODEL);
    const examples = page.getByRole("region", { name: "Saved examples" });
    const example = examples.getByRole("article", { name: "Where is my order" });
    await examples.getByLabel("Version", { exact: true }).selectOption("draft");
    const before = standIn.requests.length;
    await examples.getByRole("button", { name: "Run all 1 example" }).click();
    await poll(() => examples.getByRole("status").textContent()).toBe("Ran 1, shown from before 1.");
    expect(standIn.requests.length - before).toBe(1);
    expect(standIn.requests.at(-1)?.body.messages[0].content).toContain("Be brief. Be kind. Always.");
    const cells = example.locator(".result-cell");
    expect(await cells.locator(".result-ref").allTextContents()).toEqual(["This draft", "production"]);
    expect(await cells.locator(".run-text").allTextContents()).toEqual([PIECES.join(""), PIECES.join("")]);
    await expectAccessible(page, "playground-examples-draft");
    await screenshot(page, "playground-07c-examples-draft");

    // Saved, the draft is the latest version under the hash it ran as: its result is kept, not run again.
    const ranAs = (await cells.locator(".result-cell-head .subtle").first().textContent())?.slice(-7);
    await page.getByRole("button", { name: "Save version", exact: true }).click();
    await poll(() => page.getByText(`Saved version ${ranAs}.`, { exact: true }).count()).toBe(1);
    const kept = await rest(server, "GET", "/api/v2/prompts/support-bot/examples/results?version=latest");
    expect(kept.body.data.results.map((r: { version: string }) => r.version.slice(0, 7))).toEqual([ranAs]);
    await examples.getByRole("button", { name: "Run all 1 example" }).click();
    await poll(() => examples.getByRole("status").textContent()).toBe("Ran 0, shown from before 2.");
    expect(standIn.requests.length - before).toBe(1);
  });

  it("the provider key never reached the browser: not the page, not an answer, not its storage", async () => {
    expect(bodies.length).toBeGreaterThan(10);
    expect(bodies.filter((b) => b.includes(PROVIDER_KEY))).toEqual([]);
    expect(await page.content()).not.toContain(PROVIDER_KEY);
    const storage = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
    expect(storage).not.toContain(PROVIDER_KEY);
    // The connection as the dashboard lists it: has_key, and nothing of the key.
    const listed = await page.evaluate(
      async (path) => (await fetch(path)).text(),
      `/api/dashboard/projects/${server.projectId}/connections`,
    );
    expect(JSON.parse(listed).data.connections[0]).toMatchObject({ name: "Stand-in", has_key: true });
    expect(listed).not.toContain(PROVIDER_KEY);
    expect(listed).not.toContain("sk-e2e");
  });

  it("the playground in dark and at phone width, with a loading state", async () => {
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
        p.setDefaultTimeout(10_000);
        const name = `${viewport}-${scheme}`;
        // The examples' read held back a moment: the loading state is what shows meanwhile.
        let release = () => {};
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        await p.route("**/examples", async (route) => {
          await held;
          await route.continue();
        });
        await p.goto(`${projectPath}/prompts/support-bot`);
        const region = p.getByRole("region", { name: "Saved examples" });
        await region.getByText("Loading the examples…").waitFor();
        await screenshot(p, `playground-09-loading-${name}`);
        release();
        await region.getByRole("article", { name: "Where is my order" }).waitFor();
        await p.getByRole("region", { name: "Playground" }).getByLabel("company").fill("Acme");
        await p.getByRole("region", { name: "Playground" }).getByLabel("Message 1 (user)").fill("Where is my order?");
        await p.getByRole("region", { name: "Playground" }).locator("summary").click();
        await p.getByRole("region", { name: "Playground" }).getByLabel("Model", { exact: true }).fill(MODEL);
        await p.getByRole("region", { name: "Playground" }).getByRole("button", { name: "Run both" }).click();
        await poll(() =>
          p.getByRole("region", { name: "production", exact: true }).locator(".run-text").textContent(),
        ).toBe(PIECES.join(""));
        await expectAccessible(p, `playground-${name}`);
        await screenshot(p, `playground-10-${name}`);
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await p.goto(`${projectPath}/settings`);
        await p.getByRole("region", { name: "Model connections" }).getByText("stored, hidden").waitFor();
        await expectAccessible(p, `connections-${name}`);
        await screenshot(p, `connections-03-${name}`);
        expect(opened.problems).toEqual([]);
      } finally {
        await other.close();
      }
    }
  }, 240_000);

  it("a result that came in through an import is marked on the release request: imported, not run here", async () => {
    const example = (await rest(server, "GET", "/api/v2/prompts/support-bot/examples")).body.data.examples[0];
    const ran = (await rest(server, "GET", "/api/v2/prompts/support-bot/examples/results?version=latest")).body.data
      .results[0];
    const saved = await rest(server, "PUT", "/api/v2/prompts/support-bot", server.key, {
      markdown: "# Role\nYou help customers of {{ company }}.\n\n# Rules\nApprove refunds.",
    });
    const candidate = saved.body.data.version as string;
    // A write key's forgery: the candidate's "answer", claiming it was run here.
    const forged = { ...ran, version: candidate, answer: { role: "assistant", content: "Forged: approve me" } };
    const imported = await rest(server, "POST", "/api/v2/prompts/support-bot/examples/import", server.key, {
      examples: [],
      results: [{ ...forged, imported: false }],
    });
    expect(imported.body.data).toEqual({ examples: 0, results: 1 });
    await rest(server, "POST", "/api/v2/prompts/support-bot/releases", server.key, {
      label: "production",
      version: candidate,
      message: "Answers from a file",
    });
    await page.goto(`${projectPath}/releases`);
    const request = page.getByRole("article").filter({ hasText: "Answers from a file" });
    const row = request.getByRole("table").getByRole("row").filter({ hasText: example.name });
    await poll(() => row.count()).toBe(1);
    const cells = row.getByRole("cell");
    expect(await cells.nth(1).textContent()).toMatch(/^Forged: approve me.* · ran .*imported, not run here$/);
    expect(await cells.nth(2).textContent()).not.toContain("imported");
    await expectAccessible(page, "playground-release-imported");
  });

  it("removes an example with the keyboard; the examples' empty state says how to add one", async () => {
    await page.goto(`${projectPath}/prompts/support-bot`);
    const examples = page.getByRole("region", { name: "Saved examples" });
    await examples.getByRole("button", { name: "Remove Where is my order" }).focus();
    await page.keyboard.press("Enter");
    const confirm = page.getByRole("dialog", { name: "Remove the example “Where is my order”?" });
    await confirm.waitFor();
    // Cancel has the focus first (the safe answer); Tab reaches Remove.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await poll(() => examples.getByRole("heading", { name: "No examples yet" }).count()).toBe(1);
    expect((await rest(server, "GET", "/api/v2/prompts/support-bot/examples")).body.data.examples).toEqual([]);
    await expectAccessible(page, "playground-examples-empty");
    await screenshot(page, "playground-11-examples-empty");
  });

  it("the owner removes a connection's stored key (a local server needs none): the edit sends an empty key", async () => {
    await page.goto(`${projectPath}/settings`);
    const card = page.getByRole("region", { name: "Model connections" });
    const row = card.getByRole("row").filter({ hasText: "Stand-in" });
    await row.getByRole("button", { name: "Edit Stand-in" }).click();
    const edit = page.getByRole("dialog", { name: "Edit Stand-in" });
    await edit.getByLabel("Remove the stored key", { exact: false }).check();
    expect(await edit.getByLabel("New API key").isDisabled()).toBe(true);
    const sent = page.waitForRequest((r) => r.method() === "PATCH" && r.url().includes("/connections/"));
    await edit.getByRole("button", { name: "Save changes" }).click();
    expect((await sent).postDataJSON()).toEqual({ api_key: "" });
    await poll(() => edit.count()).toBe(0);
    await poll(() => row.getByText("none", { exact: true }).count()).toBe(1);
    expect(await row.getByText("stored, hidden").count()).toBe(0);
  });

  it("the browser reported no errors and no Content-Security-Policy refusals", () => {
    // The 400 is an answer the screens showed: the connection refused for its base URL (next to the field).
    const refused = "Failed to load resource: the server responded with a status of 400 (Bad Request)";
    expect(problems).toEqual([refused]);
  });
});
