/**
 * A newcomer's first session, in Debian's Chromium against the real binary: sign in with the printed
 * one-time password, choose a password, create a prompt from Markdown, edit a section, save, see the diff,
 * publish, roll back, create an API key, read the prompt with it over REST, revoke it and see 401. After
 * each step the REST API confirms that the step took effect.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Bootstrapped,
  chromiumAvailable,
  launchChromium,
  openPage,
  rest,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const PASSWORD = "a passphrase of my own";
const MARKDOWN = "# Role\nYou help customers of {{ company }}.\n\n# Rules\nBe brief.";

describe.runIf(chromiumAvailable())("the dashboard, end to end", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const versions: string[] = [];

  beforeAll(async () => {
    server = await startFreshServer();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    ({ page, problems } = await openPage(context));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const main = () => page.getByRole("main");
  const prompt = () => rest(server, "GET", "/api/v2/prompts/support-bot?version=latest&guard=false");

  it("signs in with the printed one-time password and chooses a password", async () => {
    await page.goto(server.url);
    await page.waitForURL(/\/sign-in/);
    await screenshot(page, "journey-01-sign-in");
    await page.getByLabel("E-mail").fill(server.owner.email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => main().getByText("the e-mail or the password is wrong").count()).toBe(1);

    await page.getByLabel("Password").fill(server.owner.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Choose your password" }).waitFor();
    await screenshot(page, "journey-02-choose-password");
    await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("Confirm new password").fill(PASSWORD);
    await page.getByRole("button", { name: "Save password" }).click();
    await page.getByRole("heading", { name: "No prompts yet" }).waitFor();
    await screenshot(page, "journey-03-empty-list");

    // The one-time password is spent: only the chosen one signs in now.
    const old = await fetch(`${server.url}/api/dashboard/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: server.owner.email, password: server.owner.password }),
    });
    expect(old.status).toBe(401);
    expect((await rest(server, "GET", "/api/v2/prompts")).body.data.prompts).toEqual([]);
  });

  it("creates a prompt from pasted Markdown", async () => {
    await page.getByRole("button", { name: "New prompt" }).click();
    await page.getByLabel("Name").fill("Support Bot");
    await page.getByLabel("Paste all at once").check();
    await page.getByLabel("Markdown").fill(MARKDOWN);
    // An empty change message is saved as none, and the field shows what History will show for it.
    expect(await page.getByLabel("Change message").getAttribute("placeholder")).toBe("No message");
    await screenshot(page, "journey-04-new-prompt");
    await page.getByRole("button", { name: "Create prompt" }).click();
    await page.waitForURL(/\/prompts\/support-bot$/);

    const created = await prompt();
    expect(created.status).toBe(200);
    expect(created.body.data.sections.map((s: { title: string; content: string }) => [s.title, s.content])).toEqual([
      ["Role", "You help customers of {{ company }}."],
      ["Rules", "Be brief."],
    ]);
    expect(created.body.data.production_version).toBeNull();
    versions.push(created.body.data.version);
    const first = (await rest(server, "GET", "/api/v2/prompts/support-bot/versions")).body.data.versions[0];
    expect(first.message).toBeNull();
  });

  it("says, before anything is published, that applications get latest and where the versions are", async () => {
    await page.getByRole("link", { name: "Preview" }).click();
    const hint = main().locator(".preview-unpublished");
    await hint.waitFor();
    expect(await hint.textContent()).toBe(
      "Not published yet: applications reading production get the latest version until one is published.",
    );
    // As the contract says: production unset serves latest.
    const read = await rest(server, "GET", "/api/v2/prompts/support-bot?guard=false");
    expect([read.status, read.body.data.label, read.body.data.version]).toEqual([200, "latest", versions[0]]);
    await screenshot(page, "journey-04b-preview-unpublished");

    await page.getByRole("link", { name: "History" }).click();
    const labels = page.getByRole("region", { name: "Labels and rollouts" });
    const none = labels.getByText(/^No label points at a version/);
    await none.waitFor();
    expect((await none.textContent())?.replace(/\s+/g, " ").trim()).toBe(
      "No label points at a version of this prompt yet. Publish a version, or move a label to one from the list of versions above.",
    );
    // The list it names is above it on the page.
    const versionsBox = await page.getByRole("region", { name: "Versions", exact: true }).boundingBox();
    const labelsBox = await labels.boundingBox();
    expect(versionsBox!.y + versionsBox!.height).toBeLessThanOrEqual(labelsBox!.y);
    await screenshot(page, "journey-04c-history-unpublished");
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await page.getByLabel("Content of section 2").waitFor();
  });

  it("edits a section in the code editor and saves a version", async () => {
    const rules = page.getByLabel("Content of section 2");
    await rules.click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("Be brief and kind to {{ customer }}.");
    await page.getByLabel("Change message").fill("Kinder rules");
    await screenshot(page, "journey-05-editor");
    await page.getByRole("button", { name: "Save version", exact: true }).click();

    await expect.poll(async () => (await prompt()).body.data.version).not.toBe(versions[0]);
    const latest = (await prompt()).body.data;
    expect(latest.sections.map((s: { content: string }) => s.content)).toEqual([
      "You help customers of {{ company }}.",
      "Be brief and kind to {{ customer }}.",
    ]);
    expect(latest.variables).toEqual(["company", "customer"]);
    versions.push(latest.version);
    await expect
      .poll(() =>
        main()
          .getByText(`Saved version ${versions[1]!.slice(0, 7)}.`)
          .count(),
      )
      .toBe(1);
    const history = await rest(server, "GET", "/api/v2/prompts/support-bot/versions");
    expect(history.body.data.versions.map((v: any) => [v.version, v.message, v.saved_by])).toEqual([
      [versions[1], "Kinder rules", `user:${server.owner.email}`],
      [versions[0], null, `user:${server.owner.email}`],
    ]);
  });

  it("shows the diff of the two versions, section by section", async () => {
    await page.getByRole("link", { name: "History" }).click();
    await page.getByLabel("From").selectOption({ value: versions[0] });
    await page.getByLabel("To").selectOption({ value: versions[1] });
    const sections = page.getByRole("list", { name: "Sections" });
    await sections.waitFor();
    await expect.poll(() => sections.getByText("changed", { exact: true }).count()).toBe(1);
    await expect.poll(() => sections.getByText("unchanged", { exact: true }).count()).toBe(1);
    // The inserted words are marked in the new side.
    expect(await sections.locator("ins").allTextContents()).toEqual([expect.stringContaining("and kind to")]);
    await screenshot(page, "journey-06-history-diff");
  });

  it("publishes the new version, then rolls back, each after a confirmation naming from and to", async () => {
    const row = (hash: string) => page.getByRole("row").filter({ hasText: hash.slice(0, 7) });
    await row(versions[1]!).getByRole("button", { name: "Publish" }).click();
    const publishDialog = page.getByRole("dialog", { name: "Publish this version?" });
    await publishDialog.waitFor();
    await screenshot(page, "journey-07-publish-dialog");
    await publishDialog.getByRole("button", { name: "Publish" }).click();
    await expect
      .poll(async () => (await rest(server, "GET", "/api/v2/prompts/support-bot")).body.data.version)
      .toBe(versions[1]);
    expect((await rest(server, "GET", "/api/v2/prompts/support-bot")).body.data.label).toBe("production");

    await row(versions[0]!).getByRole("button", { name: "Roll back" }).click();
    const rollback = page.getByRole("dialog", { name: "Roll back production?" });
    await expect.poll(() => rollback.getByText(versions[1]!.slice(0, 7)).count()).toBeGreaterThan(0);
    await expect.poll(() => rollback.getByText(versions[0]!.slice(0, 7)).count()).toBeGreaterThan(0);
    await rollback.getByRole("button", { name: "Roll back" }).click();
    await expect
      .poll(async () => (await rest(server, "GET", "/api/v2/prompts/support-bot")).body.data.version)
      .toBe(versions[0]);
    const v1 = await rest(server, "GET", "/api/v1/prompts/support-bot");
    expect(v1.body.data.version).toBe(versions[0]);
  });

  it("reorders sections from the keyboard, and asks before leaving unsaved changes", async () => {
    await page.getByRole("link", { name: "Edit" }).click();
    const titles = () =>
      page
        .getByRole("textbox", { name: "Title" })
        .evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    await expect.poll(titles).toEqual(["Role", "Rules"]);
    await page.getByRole("textbox", { name: "Title" }).nth(1).focus();
    await page.keyboard.press("Alt+ArrowUp");
    await expect.poll(titles).toEqual(["Rules", "Role"]);
    // Focus stays in the moved section, so the next key press moves it again.
    await page.keyboard.press("Alt+ArrowDown");
    await expect.poll(titles).toEqual(["Role", "Rules"]);
    await page.keyboard.press("Alt+ArrowUp");
    await expect.poll(titles).toEqual(["Rules", "Role"]);

    await page.getByRole("link", { name: "History" }).click();
    const leave = page.getByRole("dialog", { name: "Leave without saving?" });
    await leave.waitFor();
    await screenshot(page, "journey-08-unsaved-changes");
    await leave.getByRole("button", { name: "Stay" }).click();
    await expect.poll(titles).toEqual(["Rules", "Role"]);
    await page.getByRole("link", { name: "History" }).click();
    await leave.getByRole("button", { name: "Leave" }).click();
    await page.waitForURL(/\/history/);
    // Nothing was saved by moving sections around.
    expect((await rest(server, "GET", "/api/v2/prompts/support-bot/versions")).body.data.versions).toHaveLength(2);
  });

  it("previews the assembled text and fills the variables", async () => {
    await page.getByRole("link", { name: "Preview" }).click();
    await page.getByLabel("company").fill("Acme");
    await expect.poll(() => main().getByText("You help customers of Acme.").count()).toBeGreaterThan(0);
    await screenshot(page, "journey-09-preview");
  });

  it("creates an API key that reads the prompt over REST, and revokes it: 401", async () => {
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Your new API key" });
    const key = await dialog.getByLabel("New API key").inputValue();
    expect(key).toMatch(/^ps_[A-Za-z0-9_-]{43}$/);
    await screenshot(page, "journey-10-key-created");
    await dialog.getByRole("button", { name: "Done" }).click();

    const read = await rest(server, "GET", "/api/v2/prompts/support-bot", key);
    expect(read.status).toBe(200);
    expect(read.body.data.version).toBe(versions[0]);

    const row = page.getByRole("row").filter({ hasText: key.slice(0, 12) });
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await expect.poll(async () => (await rest(server, "GET", "/api/v2/prompts/support-bot", key)).status).toBe(401);
    // The key printed at first start is untouched.
    expect((await rest(server, "GET", "/api/v2/prompts/support-bot")).status).toBe(200);
    await screenshot(page, "journey-11-settings");
  });

  it("signs out, and the session is gone on the server", async () => {
    const cookies = await context.cookies();
    await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in/);
    const session = cookies.find((c) => c.name === "ps_session")!;
    const replayed = await fetch(`${server.url}/api/dashboard/session`, {
      headers: { cookie: `ps_session=${session.value}` },
    });
    expect(replayed.status).toBe(401);
  });

  it("the browser reported no errors and no Content-Security-Policy refusals", () => {
    expect(problems).toEqual([]);
  });
});
