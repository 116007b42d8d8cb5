/**
 * Scoped API keys and the audit trail, in Chromium against the real binary: an owner creates a read key (the
 * scope chosen in the form), which reads over REST and is refused a save naming the scope needed; the keys
 * table shows scope and last use; the Audit screen lists what happened, by whom, newest first. The strict CSP
 * is on: any refusal by the browser fails the test (`problems`).
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
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

const PASSWORD = "scoped keys passphrase";

describe.runIf(chromiumAvailable())("scoped keys and the audit screen", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let readKey = "";

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    browser = await launchChromium();
    const cookie = await ownerSession(server, PASSWORD);
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    ({ page, problems } = await openPage(context));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const keysSection = () => page.getByRole("region", { name: "API keys" });

  it("creates a read key with the scope chosen in the form", async () => {
    await page.goto(`${server.url}/p/${server.projectId}/settings`);
    await keysSection().getByLabel("Scope").selectOption("read");
    expect(await keysSection().getByText("read: reads prompts only", { exact: false }).count()).toBe(1);
    await keysSection().getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Your new API key" });
    readKey = await dialog.getByLabel("New API key").inputValue();
    expect(readKey).toMatch(/^ps_[A-Za-z0-9_-]{43}$/);
    await dialog.getByRole("button", { name: "Done" }).click();
    const row = keysSection()
      .getByRole("row")
      .filter({ hasText: readKey.slice(0, 12) });
    expect(await row.getByRole("cell").nth(1).innerText()).toBe("read");
    expect(await row.getByRole("cell").nth(3).innerText()).toBe("never");
  });

  it("the read key reads, is refused a save naming the scope, and its last use shows", async () => {
    expect(
      (await rest(server, "POST", "/api/v2/prompts", server.key, { name: "Support bot", markdown: "# Role\nHelp." }))
        .status,
    ).toBe(201);
    expect((await rest(server, "GET", "/api/v2/prompts/support-bot", readKey)).status).toBe(200);
    const refused = await rest(server, "PUT", "/api/v2/prompts/support-bot", readKey, { markdown: "# Role\nHarm." });
    expect(refused).toEqual({
      status: 403,
      body: {
        success: false,
        error: "scope: saving a version needs a key with scope write or higher; this key has scope read",
      },
    });
    const row = keysSection()
      .getByRole("row")
      .filter({ hasText: readKey.slice(0, 12) });
    await expect
      .poll(async () => {
        await page.reload();
        return row.getByRole("cell").nth(3).innerText();
      })
      .not.toBe("never");
    await keysSection().scrollIntoViewIfNeeded();
    await screenshot(page, "scopes-01-keys");
  });

  it("revokes it, and the Audit screen lists each change, newest first, with who did it", async () => {
    const row = keysSection()
      .getByRole("row")
      .filter({ hasText: readKey.slice(0, 12) });
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await expect.poll(async () => (await rest(server, "GET", "/api/v2/prompts", readKey)).status).toBe(401);

    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Audit" }).click();
    const trail = page.getByRole("region", { name: "Audit trail" });
    await trail.getByRole("table").waitFor();
    const rows = await trail.getByRole("row").allInnerTexts();
    const cells = (text: string) => text.split("\t").map((c) => c.trim());
    const body = rows.slice(1).map(cells);
    const owner = `user:${server.owner.email}`;
    const prefix = `key:${server.key.slice(0, 12)}`;
    expect(body.map(([, what, , change, by]) => [what, change?.replace(/[0-9a-f]{12}/, "<hash>"), by])).toEqual([
      ["Key revoked", "read → revoked", owner],
      ["Prompt created", "— → <hash>", prefix],
      ["Key created", "— → read", owner],
      ["Key created", "— → publish", "system"],
    ]);
    await screenshot(page, "scopes-02-audit");
    expect(problems).toEqual([]);
  });
});
