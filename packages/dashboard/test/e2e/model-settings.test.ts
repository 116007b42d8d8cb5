/**
 * Model settings in the dashboard, in Chromium against the real binary: the editor shows a version's
 * settings, refuses bad ones naming the field (Save disabled), saves an edit of the settings alone as a new
 * version, and History's diff shows the change. Screenshots under test-results/, axe in both themes on laptop
 * and phone.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const PASSWORD = "model settings passphrase";

describe.runIf(chromiumAvailable())("model settings in the dashboard", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let cookie: string;
  let first: string;

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    browser = await launchChromium();
    cookie = await ownerSession(server, PASSWORD);
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name: "Summarizer",
      id: "summarizer",
      markdown: "# Task\nSummarize {{ text }}.",
      model: { name: "gpt-4o", temperature: 0.2 },
    });
    expect(created.status).toBe(201);
    first = created.body.data.version;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function open(viewport: keyof typeof VIEWPORTS, scheme: "light" | "dark"): Promise<Page> {
    const context = await browser.newContext({ viewport: VIEWPORTS[viewport], colorScheme: scheme });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    const { page } = await openPage(context);
    return page;
  }

  const settings = (page: Page) => page.getByLabel("Model settings (JSON)");

  async function typeSettings(page: Page, text: string) {
    await settings(page).click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText(text);
  }

  it("shows the settings, names a bad field, and saves an edit of the settings alone as a new version", async () => {
    const page = await open("laptop", "light");
    await page.goto(`${server.url}/p/${server.projectId}/prompts/summarizer`);
    await settings(page).waitFor();
    expect(JSON.parse((await settings(page).textContent()) ?? "")).toEqual({ name: "gpt-4o", temperature: 0.2 });
    await page.getByText("Valid: gpt-4o.").waitFor();
    await screenshot(page, "model-01-editor-laptop-light");

    await typeSettings(page, '{ "name": "gpt-4o", "temperature": 0.2, "seed": 1 }');
    await page
      .getByText("model.seed: is not a known setting; put provider-specific settings in model.extra", { exact: true })
      .first()
      .waitFor();
    expect(await page.getByRole("button", { name: "Save version", exact: true }).isDisabled()).toBe(true);
    await screenshot(page, "model-02-editor-invalid");
    await expectAccessible(page, "model-editor-invalid-laptop-light");

    await typeSettings(page, '{ "name": "gpt-4o", "temperature": 0.7, "extra": { "seed": 1 } }');
    await page.getByText("Valid: gpt-4o.").waitFor();
    await page.getByRole("button", { name: "Save version", exact: true }).click();
    await expect
      .poll(async () => (await rest(server, "GET", "/api/v2/prompts/summarizer?version=latest")).body.data.version)
      .not.toBe(first);
    const latest = (await rest(server, "GET", "/api/v2/prompts/summarizer?version=latest")).body.data;
    expect(latest.model).toEqual({ extra: { seed: 1 }, name: "gpt-4o", temperature: 0.7 });
    expect(latest.sections.map((s: { content: string }) => s.content)).toEqual(["Summarize {{ text }}."]);
    await page.getByText(`Saved version ${latest.version.slice(0, 7)}.`).waitFor();

    await page.getByRole("link", { name: "History" }).click();
    await page.getByLabel("From").selectOption({ value: first });
    await page.getByLabel("To").selectOption({ value: latest.version });
    // A picker names a version's pointers before its message, which a narrow picker may cut.
    const chosen = (picker: string) => page.getByLabel(picker).locator("option:checked").textContent();
    expect([await chosen("From"), await chosen("To")]).toEqual([
      `${first.slice(0, 7)} — no message`,
      `${latest.version.slice(0, 7)} (latest) — no message`,
    ]);
    const model = page.getByRole("list", { name: "Model settings" });
    await model.waitFor();
    expect(await model.getByText("changed", { exact: true }).count()).toBe(1);
    expect((await page.getByRole("status").filter({ hasText: "model settings changed" }).count()) >= 1).toBe(true);
    // The new side marks what was added, lines first (the extra object's three whole lines), then words within
    // a changed line (the temperature's new digit, 0.2 → 0.7).
    expect((await model.locator("ins").allTextContents()).join("")).toBe('  "extra": {\n    "seed": 1\n  },\n7');
    await screenshot(page, "model-03-history-diff");
    await page.context().close();
  });

  it("marks broken JSON in the text, and an empty field (no settings) not at all", async () => {
    const page = await open("laptop", "light");
    await page.goto(`${server.url}/p/${server.projectId}/prompts/summarizer`);
    await settings(page).waitFor();
    const marks = settings(page).locator(".cm-lintRange, .cm-lintPoint");
    await typeSettings(page, '{ "name": ');
    await expect.poll(() => marks.count()).toBe(1);
    await typeSettings(page, "");
    await page.getByText("No model settings.", { exact: true }).waitFor();
    // Past the linter's delay (300 ms): a mark it were to put on the empty field would be there by now.
    await page.waitForTimeout(1000);
    expect(await marks.count()).toBe(0);
    await screenshot(page, "model-04-editor-empty");
    await page.context().close();
  });

  for (const viewport of ["laptop", "phone"] as const) {
    for (const scheme of ["light", "dark"] as const) {
      it(`editor and diff are accessible (${viewport}, ${scheme})`, async () => {
        const page = await open(viewport, scheme);
        await page.goto(`${server.url}/p/${server.projectId}/prompts/summarizer`);
        await settings(page).waitFor();
        await screenshot(page, `model-editor-${viewport}-${scheme}`);
        await expectAccessible(page, `model-editor-${viewport}-${scheme}`);
        await page.getByRole("link", { name: "History" }).click();
        await page.getByRole("list", { name: "Model settings" }).waitFor();
        await screenshot(page, `model-diff-${viewport}-${scheme}`);
        await expectAccessible(page, `model-diff-${viewport}-${scheme}`);
        await page.context().close();
      }, 60_000);
    }
  }
});
