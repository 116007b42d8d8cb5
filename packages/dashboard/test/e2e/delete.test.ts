/**
 * Deleting a prompt in Chromium against the real binary: the dialog asks for the prompt's id and keeps the
 * button disabled until it is typed exactly; a failure is shown in the dialog; a deletion lands on the list
 * with a notice, even from an editor with unsaved edits, and REST reads are 404 at once; viewers are not
 * offered the action. Screenshots of the dialog under test-results/.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Bootstrapped,
  chromiumAvailable,
  launchChromium,
  openPage,
  operatorAddsMember,
  ownerSession,
  rest,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const PASSWORD = "deletion passphrase";

describe.runIf(chromiumAvailable())("deleting a prompt in the dashboard", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let cookie: string;
  let projectPath: string;

  const create = async (name: string, id: string) => {
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name,
      id,
      description: "Answers questions about refunds.",
      markdown: "# Role\nYou explain the refund policy of {{ shop }}.",
      publish: true,
    });
    expect(created.status).toBe(201);
    const saved = await rest(server, "PUT", `/api/v2/prompts/${id}`, server.key, {
      markdown: "# Role\nYou explain the refund policy of {{ shop }}, briefly.",
      message: "Briefer",
    });
    expect(saved.status).toBe(200);
  };

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    browser = await launchChromium();
    cookie = await ownerSession(server, PASSWORD);
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    ({ page, problems } = await openPage(context));
    projectPath = `${server.url}/p/${server.projectId}`;
    await create("Refund policy", "refund-policy");
    await create("Old greeter", "old-greeter");
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const dialog = () => page.getByRole("dialog", { name: "Delete this prompt?" });
  const confirmButton = () => dialog().getByRole("button", { name: "Delete prompt" });
  const typed = () => dialog().getByLabel("Type refund-policy to confirm");

  it("asks for the prompt's id; the button stays disabled until it is typed exactly; Escape and Cancel close it", async () => {
    await page.goto(`${projectPath}/prompts/refund-policy`);
    await page.getByRole("heading", { name: "Refund policy" }).waitFor();
    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog().waitFor();
    // The field has the focus: the person types at once.
    expect(await typed().evaluate((el) => el === document.activeElement)).toBe(true);
    await expect
      .poll(() => dialog().getByText("both its versions will be deleted for good", { exact: false }).count())
      .toBe(1);
    expect(await confirmButton().isDisabled()).toBe(true);
    await screenshot(page, "delete-01-dialog-empty");
    for (const almost of ["refund", "refund-policy ", "Refund-policy", "refund-policy2"]) {
      await typed().fill(almost);
      expect(await confirmButton().isDisabled(), almost).toBe(true);
    }
    await typed().fill("refund-policy");
    expect(await confirmButton().isEnabled()).toBe(true);
    await screenshot(page, "delete-02-dialog-confirmed");

    await page.keyboard.press("Escape");
    await dialog().waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Delete…" }).click();
    // Opened again, it starts empty.
    expect(await typed().inputValue()).toBe("");
    await dialog().getByRole("button", { name: "Cancel" }).click();
    await dialog().waitFor({ state: "detached" });
    expect((await rest(server, "GET", "/api/v2/prompts/refund-policy")).status).toBe(200);
  });

  it("when the prompt was deleted elsewhere meanwhile, says so and leads back to the list", async () => {
    await page.getByRole("button", { name: "Delete…" }).click();
    await typed().fill("refund-policy");
    // Deleted elsewhere (over REST) while the dialog is open: the dialog says so, and stays.
    expect((await rest(server, "DELETE", "/api/v2/prompts/refund-policy")).status).toBe(200);
    await confirmButton().click();
    const alert = dialog().getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe("This prompt no longer exists: someone may have deleted it already.");
    // Nothing to retry: the one way on is back to the list.
    expect(await confirmButton().count()).toBe(0);
    await screenshot(page, "delete-03-dialog-gone");
    await dialog().getByRole("button", { name: "Back to the prompts" }).click();
    await page.waitForURL(`${projectPath}/prompts`);
    await page
      .getByRole("status")
      .filter({ hasText: "“Refund policy” (refund-policy) had already been deleted." })
      .waitFor();
    expect(await page.getByRole("link", { name: "Refund policy" }).count()).toBe(0);
  });

  it("shows any other failure in the dialog, and lets the person try again", async () => {
    await page.goto(`${projectPath}/prompts/old-greeter`);
    await page.getByRole("heading", { name: "Old greeter" }).waitFor();
    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog().getByLabel("Type old-greeter to confirm").fill("old-greeter");
    // The server goes away for a moment: the request cannot be sent.
    await page.route("**/api/dashboard/projects/*/prompts/old-greeter", (route) =>
      route.request().method() === "DELETE" ? route.abort("connectionrefused") : route.fallback(),
    );
    await confirmButton().click();
    const alert = dialog().getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      "Could not delete the prompt: Could not reach the server. Check the connection and try again.",
    );
    expect(await confirmButton().isEnabled()).toBe(true);
    await screenshot(page, "delete-03b-dialog-error");
    await page.unroute("**/api/dashboard/projects/*/prompts/old-greeter");
    await dialog().getByRole("button", { name: "Cancel" }).click();
    expect((await rest(server, "GET", "/api/v2/prompts/old-greeter")).status).toBe(200);
    // The failed request is what Chromium complains about; nothing else may.
    expect(problems.filter((p) => !p.includes("ERR_CONNECTION_REFUSED"))).toEqual([]);
    problems.length = 0;
  });

  it("deletes from an editor with unsaved edits: lands on the list with a notice, and REST reads are 404", async () => {
    expect((await rest(server, "GET", "/api/v2/prompts/old-greeter")).status).toBe(200);
    expect((await rest(server, "GET", "/api/v1/prompts/old-greeter")).status).toBe(200);
    await page.goto(`${projectPath}/prompts/old-greeter`);
    await page.getByRole("heading", { name: "Old greeter" }).waitFor();
    await page.getByLabel("Description").fill("An edit that will not be saved");
    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog().getByLabel("Type old-greeter to confirm").fill("old-greeter");
    await dialog().getByRole("button", { name: "Delete prompt" }).click();

    await page.waitForURL(`${projectPath}/prompts`);
    const notice = page.getByRole("status").filter({ hasText: "Deleted" });
    await notice.waitFor();
    expect(await notice.textContent()).toBe("Deleted “Old greeter” (old-greeter) and both its versions.");
    // Not asked whether to leave the unsaved edits: there is nothing left to save them to.
    expect(await page.getByRole("dialog", { name: "Leave without saving?" }).count()).toBe(0);
    await page.getByRole("heading", { name: "No prompts yet" }).waitFor();
    await screenshot(page, "delete-04-list-after");
    expect((await rest(server, "GET", "/api/v2/prompts/old-greeter")).status).toBe(404);
    expect((await rest(server, "GET", "/api/v1/prompts/old-greeter")).status).toBe(404);

    // Its address says that it is gone.
    await page.goto(`${projectPath}/prompts/old-greeter`);
    await page.getByRole("heading", { name: "Prompt not found", level: 2 }).waitFor();
    // The way on is the prompt list of the project at hand, not only the list of projects.
    const back = page.getByRole("link", { name: /^Go to the prompts of / });
    expect(await back.getAttribute("href")).toBe(`/p/${server.projectId}/prompts`);
    await screenshot(page, "delete-05-prompt-not-found");
    await back.click();
    await page.waitForURL(`${projectPath}/prompts`);
    await page.getByRole("heading", { name: "No prompts yet" }).waitFor();
    expect(problems).toEqual([]);
  });

  it("is not offered to a viewer", async () => {
    await create("Read only", "read-only");
    const session = await (
      await fetch(`${server.url}/api/dashboard/session`, { headers: { cookie: `ps_session=${cookie}` } })
    ).json();
    const orgId = (session as { data: { memberships: { org: { id: string } }[] } }).data.memberships[0]!.org.id;
    const { password } = await operatorAddsMember(server, orgId, "viewer@example.com", "viewer");
    const viewerCookie = await ownerSession({ ...server, owner: { email: "viewer@example.com", password } }, PASSWORD);
    const viewer = await browser.newContext({ viewport: VIEWPORTS.phone, colorScheme: "dark" });
    try {
      await viewer.addCookies([{ name: "ps_session", value: viewerCookie, url: server.url }]);
      const opened = await openPage(viewer);
      await opened.page.goto(`${projectPath}/prompts/read-only`);
      await opened.page.getByRole("heading", { name: "Read only" }).waitFor();
      expect(await opened.page.getByRole("button", { name: "Delete…" }).count()).toBe(0);
      expect(opened.problems).toEqual([]);
    } finally {
      await viewer.close();
    }
  });

  it("the dialog at phone width, dark", async () => {
    const phone = await browser.newContext({ viewport: VIEWPORTS.phone, colorScheme: "dark" });
    try {
      await phone.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
      const opened = await openPage(phone);
      await opened.page.goto(`${projectPath}/prompts/read-only`);
      await opened.page.getByRole("heading", { name: "Read only" }).waitFor();
      await opened.page.waitForLoadState("networkidle");
      await screenshot(opened.page, "delete-05-phone-dark-page");
      await opened.page.getByRole("button", { name: "Delete…" }).click();
      const phoneDialog = opened.page.getByRole("dialog", { name: "Delete this prompt?" });
      await phoneDialog.getByLabel("Type read-only to confirm").fill("read-only");
      await screenshot(opened.page, "delete-06-phone-dark-dialog");
      const overflow = await opened.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      expect(opened.problems).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});
