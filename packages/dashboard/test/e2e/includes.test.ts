/**
 * Includes in the dashboard (issue 41, docs/includes.md), in Chromium against the real binary: an include
 * written in the section editor with completion (ids, then a section title), its chip naming what it follows and
 * its pin, a server refusal shown at the section, the expanded preview, the save that pins it, the jump to the
 * included prompt (Ctrl+click and the keyboard); then the piece published, "Update available" on a dependent
 * with the diff of its expanded text and its update from the banner, and on the piece two dependents updated
 * in one action. Empty, loading and error states; light and dark, laptop and phone. Axe and a screenshot of each.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "../../../server/test/support/binary.js";
import {
  type Bootstrapped,
  chromiumAvailable,
  expectAccessible,
  launchChromium,
  openPage,
  ownerSession,
  rest,
  SCREENSHOTS,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const PASSWORD = "includes passphrase";
const SAFETY = [
  { title: "Rules", content: "Never share secrets." },
  { title: "Tone", content: "Be kind." },
];
const SAFETY_2 = [
  { title: "Rules", content: "Never share secrets or keys." },
  { title: "Tone", content: "Be kind." },
];

describe.runIf(chromiumAvailable())("the dashboard, end to end: includes", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let cookie: string;
  let base = "";
  let safety1 = "";
  let safety2 = "";
  const problems: string[] = [];

  const create = async (id: string, content: string) => {
    const res = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id,
      name: id[0]?.toUpperCase() + id.slice(1),
      sections: [{ title: "Role", content }],
      publish: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.version as string;
  };
  const read = async (id: string, version = "production") =>
    (await rest(server, "GET", `/api/v2/prompts/${id}?version=${version}&guard=false`)).body.data;

  const open = async (path: string, options: { scheme?: "light" | "dark"; phone?: boolean } = {}): Promise<Page> => {
    const context = await browser.newContext({
      viewport: options.phone ? VIEWPORTS.phone : VIEWPORTS.laptop,
      colorScheme: options.scheme ?? "light",
    });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    const opened = await openPage(context);
    opened.page.setDefaultTimeout(15_000);
    opened.page.on("console", (m) => {
      if (m.type() === "error" && !/status of (400|404|500)/.test(m.text())) problems.push(m.text());
    });
    opened.page.on("pageerror", (e) => problems.push(e.message));
    await opened.page.goto(`${server.url}${path}`);
    return opened.page;
  };

  beforeAll(async () => {
    server = await startFreshServer();
    cookie = await ownerSession(server, PASSWORD);
    base = `/p/${server.projectId}/prompts`;
    const piece = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "safety",
      name: "Safety",
      sections: SAFETY,
      publish: true,
    });
    expect(piece.status).toBe(201);
    safety1 = piece.body.data.version;
    await create("support", "You help.");
    await create("billing", "You bill. {{> safety}}");
    await create("orders", "You ship. {{> safety#Rules}}");
    await create("lonely", "Nobody includes me.");
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("writes an include with completion, shows its chip and the expanded preview, shows a refusal at the section, saves the pin, and jumps", async () => {
    const page = await open(`${base}/support`);
    const content = page.getByRole("textbox", { name: "Content of section 1" });
    await content.waitFor();
    await content.click();
    await page.keyboard.press("ControlOrMeta+End");

    // An unknown prompt: the save is refused, and the field's message shows at the section.
    await page.keyboard.type(" {{> nothing}}");
    await page.getByRole("button", { name: "Save version", exact: true }).click();
    const error = page.locator(".section .field-error");
    await expect.poll(() => error.textContent()).toBe('include "nothing": unknown prompt');
    await expectAccessible(page, "includes-editor-refused");
    await screenshot(page, "includes-01-refused");

    // Replace it: completion of the prompt id after `{{>`, then of a section title after `#`.
    await content.click();
    await page.keyboard.press("ControlOrMeta+End");
    for (let i = 0; i < " {{> nothing}}".length; i++) await page.keyboard.press("Backspace");
    await page.keyboard.type("\nFollow {{> saf");
    const options = page.getByRole("listbox");
    await options.waitFor();
    expect(await options.getByRole("option").allTextContents()).toEqual(["safetySafety"]);
    await expectAccessible(page, "includes-editor-completion");
    // The viewport as it is: a full-page shot scrolls to the top, and the list closes with its line out of view.
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, "includes-02-completion.png") });
    await page.keyboard.press("Enter");
    await page.keyboard.press("End");
    await page.keyboard.type("\nTone: {{> safety#");
    await options.waitFor();
    expect(await options.getByRole("option").allTextContents()).toEqual(["Rules", "Tone"]);
    await page.keyboard.type("To");
    await expect.poll(() => options.getByRole("option").allTextContents()).toEqual(["Tone"]);
    await page.keyboard.press("Enter");

    // Each include a chip, with what it follows and that the save pins it.
    const chips = page.locator(".cm-include");
    await expect.poll(() => chips.allTextContents()).toEqual(["{{> safety}}", "{{> safety#Tone}}"]);
    expect(await page.locator(".cm-include-pin").allTextContents()).toEqual([
      "production · pinned at save",
      "production · pinned at save",
    ]);
    // Under the editor: each include, what the save pins, and a link to it.
    const list = page.getByRole("list", { name: "Includes" });
    await expect
      .poll(() => list.getByRole("listitem").allTextContents())
      .toEqual([
        `{{> safety}}production: the save pins ${safety1.slice(0, 7)}Open safety`,
        `{{> safety#Tone}}production: the save pins ${safety1.slice(0, 7)}Open safety`,
      ]);
    await page.getByText("Preview with includes expanded").click();
    const preview = page.getByRole("region", { name: "Section with includes expanded" });
    await expect
      .poll(() => preview.textContent())
      .toBe("You help.\nFollow Never share secrets.\n\nBe kind.\nTone: Be kind.");
    await expect.poll(() => error.count()).toBe(1);
    await expectAccessible(page, "includes-editor-chips");
    await screenshot(page, "includes-03-chips");

    // Saved and published: the version pins safety's production, and reads serve the text expanded.
    await page.getByRole("button", { name: "Save and publish", exact: true }).click();
    await page.getByText("It is now in production.", { exact: false }).waitFor();
    const served = await read("support");
    expect(served.includes).toEqual([
      { include: "safety", prompt: "safety", section: null, pointer: "production", version: safety1 },
      { include: "safety#Tone", prompt: "safety", section: "Tone", pointer: "production", version: safety1 },
    ]);
    expect(served.prompt).toBe("<Role>\nYou help.\nFollow Never share secrets.\n\nBe kind.\nTone: Be kind.\n</Role>");
    expect(await error.count()).toBe(0);
    // The chips now name the pin.
    await expect
      .poll(() => page.locator(".cm-include-pin").allTextContents())
      .toEqual([`production · ${safety1.slice(0, 7)}`, `production · ${safety1.slice(0, 7)}`]);
    await expect
      .poll(() => list.getByRole("listitem").first().textContent())
      .toBe(`{{> safety}}pinned to ${safety1.slice(0, 7)}Open safety`);

    // Ctrl+click on a chip opens the included prompt.
    await chips.first().click({ modifiers: ["ControlOrMeta"] });
    await page.waitForURL(`${server.url}${base}/safety`);
    await page.getByRole("heading", { name: "Safety", level: 1 }).waitFor();
    // And from the keyboard: the link under the editor.
    await page.goBack();
    const link = page.getByRole("link", { name: "Open safety" }).first();
    await link.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}${base}/safety`);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("after the piece is published, a dependent shows 'Update available' with the diff, and updates from the banner", async () => {
    const page = await open(`${base}/safety`);
    const content = page.getByRole("textbox", { name: "Content of section 1" });
    await content.waitFor();
    await content.click();
    await page.keyboard.press("ControlOrMeta+End");
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("Never share secrets or keys.");
    await page.getByRole("button", { name: "Save and publish", exact: true }).click();
    await page.getByText("It is now in production.", { exact: false }).waitFor();
    safety2 = (await read("safety")).version;
    expect((await read("safety")).sections.map((s: { title: string; content: string }) => s)).toMatchObject(SAFETY_2);
    // Nothing a dependent serves changed.
    const before = await read("support");
    expect(before.prompt).toContain("Follow Never share secrets.\n");

    await page.goto(`${server.url}${base}/support/includes`);
    const banner = page.getByRole("region", { name: "Update available" });
    await banner.waitFor();
    // Both includes pin safety's old version: the whole prompt, and its Tone section (whose text is the same).
    expect(
      await banner
        .getByRole("list", { name: "Includes behind what they follow" })
        .getByRole("listitem")
        .allTextContents(),
    ).toEqual([
      `safety pinned to ${safety1.slice(0, 7)}; production of safety is ${safety2.slice(0, 7)} now`,
      `safety#Tone pinned to ${safety1.slice(0, 7)}; production of safety is ${safety2.slice(0, 7)} now`,
    ]);
    // The diff of the expanded text: the one section changed, its old and new text.
    await expect
      .poll(() => banner.locator(".diff-summary").textContent())
      .toBe(`${before.version.slice(0, 7)} → new pins: sections 1 changed.`);
    expect(await banner.locator(".diff-col-before del").allTextContents()).toEqual([]);
    expect(await banner.locator(".diff-col-after ins").allTextContents()).toEqual([" or keys"]);
    // What it includes, each with its pin and status.
    const table = page.getByRole("table", { name: "Includes and their pins" });
    expect(await table.getByRole("row").allTextContents()).toEqual([
      "IncludePromptFollowsPinnedNowStatus",
      `safetysafetyproduction${safety1.slice(0, 7)}${safety2.slice(0, 7)}Update available`,
      `safety#Tonesafety (section “Tone”)production${safety1.slice(0, 7)}${safety2.slice(0, 7)}Update available`,
    ]);
    await expectAccessible(page, "includes-update-available");
    await screenshot(page, "includes-04-update-available");

    await banner.getByRole("checkbox", { name: "Also publish it to production" }).check();
    await banner.getByRole("button", { name: "Update and publish" }).click();
    const notice = page.getByRole("status").filter({ hasText: "with the new pins" });
    await notice.waitFor();
    const updated = await read("support");
    expect(await notice.textContent()).toBe(
      `support: Saved version ${updated.version.slice(0, 7)} with the new pins; it is now in production.`,
    );
    expect(updated.prompt).toBe(
      "<Role>\nYou help.\nFollow Never share secrets or keys.\n\nBe kind.\nTone: Be kind.\n</Role>",
    );
    await banner.waitFor({ state: "detached" });
    await expectAccessible(page, "includes-updated");
    await screenshot(page, "includes-05-updated");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("on the piece, lists its dependents with 'Update available' and updates two of them in one action", async () => {
    const page = await open(`${base}/safety/includes`);
    const usedBy = page.getByRole("table", { name: "Versions of other prompts that include safety" });
    await usedBy.waitFor();
    const short = (h: string) => h.slice(0, 7);
    const billing = await read("billing");
    const orders = await read("orders");
    const rows = await usedBy.getByRole("row").allTextContents();
    expect(rows[0]).toBe("ChoosePromptVersionServed byIncludePinnedStatus");
    expect(rows).toContain(
      `billing${short(billing.version)}productionlatestsafety${short(safety1)}Update available production is ${short(safety2)} Show the diff`,
    );
    expect(rows).toContain(
      `orders${short(orders.version)}productionlatestsafety#Rules${short(safety1)}Update available production is ${short(safety2)} Show the diff`,
    );
    // The diff of one dependent's expanded text.
    const billingRow = usedBy.getByRole("row").filter({ hasText: "billing" });
    await billingRow.getByRole("button", { name: "Show the diff" }).click();
    await expect
      .poll(() => usedBy.locator(".diff-summary").textContent())
      .toBe(`${short(billing.version)} → new pins: sections 1 changed.`);
    await expectAccessible(page, "includes-used-by");
    await screenshot(page, "includes-06-used-by");

    await page.getByRole("checkbox", { name: "Choose billing" }).check();
    await page.getByRole("checkbox", { name: "Choose orders" }).check();
    await page.getByRole("checkbox", { name: "Also publish each to production where allowed" }).check();
    await page.getByRole("button", { name: "Update the chosen (2)" }).click();
    const notice = page.getByRole("status").filter({ hasText: "billing:" });
    await notice.waitFor();
    const billing2 = await read("billing");
    const orders2 = await read("orders");
    expect(await notice.getByRole("listitem").allTextContents()).toEqual([
      `billing: Saved version ${short(billing2.version)} with the new pins; it is now in production.`,
      `orders: Saved version ${short(orders2.version)} with the new pins; it is now in production.`,
    ]);
    expect(billing2.prompt).toBe("<Role>\nYou bill. Never share secrets or keys.\n\nBe kind.\n</Role>");
    expect(orders2.prompt).toBe("<Role>\nYou ship. Never share secrets or keys.\n</Role>");
    // Every served version is up to date now; nothing is left to choose.
    await expect
      .poll(() => usedBy.getByRole("row").allTextContents())
      .toContain(`billing${short(billing2.version)}productionlatestsafety${short(safety2)}Up to date`);
    await expect.poll(() => page.getByRole("checkbox", { name: /^Choose / }).count()).toBe(0);
    await expectAccessible(page, "includes-used-by-updated");
    await screenshot(page, "includes-07-used-by-updated");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows the empty, loading and error states", async () => {
    const page = await open(`${base}/lonely/includes`);
    await page.getByRole("heading", { name: "This version includes no other prompt" }).waitFor();
    await page.getByRole("heading", { name: "No other prompt includes this one" }).waitFor();
    await expectAccessible(page, "includes-empty");
    await screenshot(page, "includes-08-empty");

    // Loading: the answers held back until seen; then an error with a retry.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/included-by", async (route) => {
      await held;
      await route.fulfill({
        status: 500,
        contentType: "application/json",
        body: JSON.stringify({ success: false, error: "the store is away" }),
      });
    });
    await page.goto(`${server.url}${base}/safety/includes`);
    await page.getByText("Loading what includes this prompt…").waitFor();
    await expectAccessible(page, "includes-loading");
    await screenshot(page, "includes-09-loading");
    release();
    const failed = page.getByRole("alert").filter({ hasText: "the store is away" });
    await failed.waitFor({ timeout: 30_000 });
    await expectAccessible(page, "includes-error");
    await screenshot(page, "includes-10-error");
    await page.unroute("**/included-by");
    await failed.getByRole("button", { name: "Try again" }).click();
    await page.getByRole("table", { name: "Versions of other prompts that include safety" }).waitFor();
    await page.context().close();
  });

  it("in dark and at phone width: the editor's includes and the Includes tab", async () => {
    await rest(server, "PUT", "/api/v2/prompts/safety", server.key, {
      sections: [
        { title: "Rules", content: "Never share anything." },
        { title: "Tone", content: "Be kind." },
      ],
      publish: true,
    });
    for (const [viewport, scheme] of [
      ["laptop", "dark"],
      ["phone", "light"],
      ["phone", "dark"],
    ] as const) {
      const name = `${viewport}-${scheme}`;
      const page = await open(`${base}/support/includes`, { scheme, phone: viewport === "phone" });
      await page.getByRole("region", { name: "Update available" }).locator(".diff-summary").waitFor();
      await expectAccessible(page, `includes-tab-${name}`);
      await screenshot(page, `includes-11-tab-${name}`);
      await page.goto(`${server.url}${base}/support`);
      await page.locator(".cm-include").first().waitFor();
      await page.getByText("Preview with includes expanded").click();
      await expectAccessible(page, `includes-editor-${name}`);
      await screenshot(page, `includes-12-editor-${name}`);
      await page.context().close();
    }
    expect(problems).toEqual([]);
  });

  it("with production protected, the banner says so, and its update makes a release request", async () => {
    const set = await cli(server.databaseUrl, ["label", "set", server.projectId, "production", "--protected"]);
    expect(set.code, set.stderr).toBe(0);
    const page = await open(`${base}/support/includes`);
    const banner = page.getByRole("region", { name: "Update available" });
    await banner.locator(".diff-summary").waitFor();
    await banner.getByRole("checkbox", { name: "Also publish it to production" }).check();
    await banner
      .getByText("production is protected: publishing makes a release request for an owner to approve.")
      .waitFor();
    await expectAccessible(page, "includes-protected");
    await screenshot(page, "includes-13-protected");
    const servedBefore = (await read("support")).version;
    await banner.getByRole("button", { name: "Update and publish" }).click();
    const notice = page.getByRole("status").filter({ hasText: "release request" });
    await notice.waitFor();
    const latest = await read("support", "latest");
    expect(await notice.textContent()).toBe(
      `support: Saved version ${latest.version.slice(0, 7)} with the new pins; production is protected, so a release request waits for an owner's approval. See the request`,
    );
    // Production serves what it did; the request waits for an owner.
    expect((await read("support")).version).toBe(servedBefore);
    const releases = (await rest(server, "GET", "/api/v2/releases?status=pending")).body.data.releases;
    expect(
      releases.map((r: { prompt_id: string; label: string; version: string }) => [r.prompt_id, r.label, r.version]),
    ).toEqual([["support", "production", latest.version]]);
    await page.getByRole("link", { name: "See the request" }).click();
    await page.waitForURL(`${server.url}/p/${server.projectId}/releases`);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
