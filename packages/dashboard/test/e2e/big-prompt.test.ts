/**
 * A 250 KB system prompt in the dashboard, in Debian's Chromium against the real binary: the editor opens
 * it, takes an edit at the end of the big section and saves it byte for byte; the history shows the one
 * changed paragraph side by side; the preview shows the whole assembled text. Screenshots of each, and of the
 * editor at phone width and in dark.
 */
import { join } from "node:path";
import { assemble } from "@promptstore/core/prompts/assemble";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
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
  SCREENSHOTS,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const MARKDOWN = bigPromptMarkdown();

/**
 * After a jump in scrolling: blocks of text (content-visibility: auto) that came on screen are drawn from the
 * frame after the one that finds them there, so a picture taken at once shows them empty.
 */
const settled = (page: Page) =>
  page.evaluate(
    () => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))),
  );
const SECTIONS = markdownToSections(MARKDOWN);
const EDIT = "Rewritten: keep answers short and cite the file.";
const EDITED = editedBigPrompt(MARKDOWN, EDIT);

describe.runIf(chromiumAvailable())("the dashboard on a 250 KB prompt", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let cookie: string;
  const versions: string[] = [];
  const base = () => `${server.url}/p/${server.projectId}/prompts/agent`;

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "agent",
      name: "Agent",
      markdown: MARKDOWN,
      publish: true,
    });
    versions.push(created.body.data.version);
    const saved = await rest(server, "PUT", "/api/v2/prompts/agent", server.key, { markdown: EDITED });
    versions.push(saved.body.data.version);
    cookie = await ownerSession(server, "a passphrase of my own");
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    ({ page, problems } = await openPage(context));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("opens the editor on it, takes an edit at the end of the big section, and saves exactly that", async () => {
    await page.goto(base());
    const big = page.getByRole("textbox", { name: "Content of section 2" });
    await big.waitFor({ timeout: 30_000 });
    await expect.poll(() => big.textContent(), { timeout: 30_000 }).toContain("## Part 1");
    await screenshot(page, "big-prompt-01-editor");
    await big.click();
    await page.keyboard.press("ControlOrMeta+End");
    await page.keyboard.type(" Typed at the end.");
    await page.getByLabel("Change message").fill("typed at the end");
    await page.getByRole("button", { name: "Save version", exact: true }).click();
    const expected = markdownToSections(EDITED).map((s, i) =>
      i === 1 ? { ...s, content: `${s.content} Typed at the end.` } : s,
    );
    await expect
      .poll(
        async () => (await rest(server, "GET", "/api/v2/prompts/agent?version=latest&guard=false")).body.data.version,
        {
          timeout: 30_000,
        },
      )
      .not.toBe(versions[1]);
    const latest = (await rest(server, "GET", "/api/v2/prompts/agent?version=latest&guard=false")).body.data;
    expect(
      latest.sections.map((s: { title: string; content: string; enabled: boolean }) => ({
        title: s.title,
        content: s.content,
        enabled: s.enabled,
      })),
    ).toEqual(expected);
    expect(problems).toEqual([]);
  });

  // The same editor in dark and at phone width: the start of the big section on screen, then its last line
  // after Ctrl+End, each screen checked by axe.
  for (const [viewport, scheme] of [
    ["phone", "light"],
    ["laptop", "dark"],
    ["phone", "dark"],
  ] as const) {
    it(`opens the editor on it at ${viewport} width, ${scheme}, and goes to the end of the big section`, async () => {
      const latest = (await rest(server, "GET", "/api/v2/prompts/agent?version=latest&guard=false")).body.data;
      const content: string = latest.sections[1].content;
      const context = await browser.newContext({ viewport: VIEWPORTS[viewport], colorScheme: scheme });
      await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
      const opened = await openPage(context);
      const big = opened.page.getByRole("textbox", { name: "Content of section 2" });
      await opened.page.goto(base());
      await expect
        .poll(() => big.locator(".cm-line").first().textContent(), { timeout: 30_000 })
        .toBe(content.split("\n")[0]);
      await screenshot(opened.page, `big-prompt-05-editor-${viewport}-${scheme}`);
      await expectAccessible(opened.page, `big-prompt-editor-${viewport}-${scheme}`);
      // Scrolled to by the page, as a reader does: CodeMirror draws only the lines near the window, so the
      // full-page picture above shows the big section's box empty below its first lines. Here its lines fill it.
      await big.scrollIntoViewIfNeeded();
      await expect
        .poll(() =>
          big.evaluate((content) => {
            const scroller = (content.closest(".cm-scroller") as HTMLElement).getBoundingClientRect();
            const lines = [...content.querySelectorAll(".cm-line")].map((l) => l.getBoundingClientRect().bottom);
            return Math.max(...lines) >= scroller.bottom;
          }),
        )
        .toBe(true);
      await opened.page.screenshot({
        path: join(SCREENSHOTS, `big-prompt-05-editor-in-view-${viewport}-${scheme}.png`),
      });
      await big.click();
      await opened.page.keyboard.press("ControlOrMeta+End");
      await expect.poll(() => big.locator(".cm-line").last().textContent()).toBe(content.split("\n").at(-1));
      await opened.page.screenshot({ path: join(SCREENSHOTS, `big-prompt-06-editor-end-${viewport}-${scheme}.png`) });
      await expectAccessible(opened.page, `big-prompt-editor-end-${viewport}-${scheme}`);
      expect(opened.problems).toEqual([]);
      await context.close();
    }, 60_000);
  }

  it("shows the one changed paragraph of the history side by side", async () => {
    await page.goto(`${base()}/history?from=${versions[0]}&to=${versions[1]}`);
    const sections = page.getByRole("list", { name: "Sections" });
    await sections.waitFor({ timeout: 30_000 });
    await expect.poll(() => sections.getByText("changed", { exact: true }).count(), { timeout: 30_000 }).toBe(1);
    expect(await sections.getByText("unchanged", { exact: true }).count()).toBe(3);
    const inserted = await sections.locator(".diff-col-after ins").allTextContents();
    expect(inserted.join(" ")).toBe("Rewritten: keep answers short and cite the file");
    // Each column holds its whole text, drawn in blocks whose boundaries stand for the newlines between them
    // (text-chunks.ts): without its newlines, the text in the page is exactly the section's.
    const flat = (text: string | null) => (text ?? "").replaceAll("\n", "");
    const after = await sections.locator(".diff-col-after pre").textContent();
    expect(flat(after)).toBe(flat(markdownToSections(EDITED)[1]!.content));
    const before = await sections.locator(".diff-col-before pre").textContent();
    expect(flat(before)).toBe(flat(SECTIONS[1]!.content));
    expect(await sections.locator(".diff-col-after .text-chunk").count()).toBeGreaterThan(20);
    // Outside the blocks, only stretches shorter than a block (60 lines, text-chunks.ts): the rest is in blocks,
    // laid out only near the screen. (The common part after the change starts with a newline, and was once
    // drawn whole: 121 212 characters in one text, laid out at every change of the window's width.)
    const loose = await sections.locator(".diff-changed pre").evaluateAll((pres) =>
      pres.flatMap((pre) => {
        const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
        const multiline: number[] = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const text = (node as Text).data;
          const lines = text.split("\n").length;
          if (!node.parentElement?.closest(".text-chunk") && lines > 60) multiline.push(lines);
        }
        return multiline;
      }),
    );
    expect(loose).toEqual([]);
    await sections.locator(".diff-col-after ins").first().scrollIntoViewIfNeeded();
    await settled(page);
    await page.screenshot({ path: join(SCREENSHOTS, "big-prompt-03-diff-change.png") });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SCREENSHOTS, "big-prompt-02-diff.png") });
    await expectAccessible(page, "big-prompt-diff");
  });

  it("previews the whole assembled prompt", async () => {
    await page.goto(`${base()}/preview?version=${versions[0]}`);
    const text = page.locator("pre.assembled");
    await expect
      .poll(async () => (await text.textContent())?.length ?? 0, { timeout: 30_000 })
      .toBeGreaterThan(240_000);
    const guarded = (await rest(server, "GET", `/api/v2/prompts/agent?version=${versions[0]}`)).body.data.prompt;
    // Drawn in blocks (text-chunks.ts): the blocks are the text's lines, the newline between two blocks
    // being the block boundary.
    const blocks = await text.locator(".text-chunk").allTextContents();
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.join("\n")).toBe(guarded);
    expect(guarded.startsWith(assemble(SECTIONS))).toBe(true);
    // The page is a quarter of a megabyte of text tall: the screen a person sees, not the whole page.
    await page.screenshot({ path: join(SCREENSHOTS, "big-prompt-04-preview.png") });
    await expectAccessible(page, "big-prompt-preview");
  });
});
