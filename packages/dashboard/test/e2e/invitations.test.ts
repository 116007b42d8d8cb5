/**
 * Invitations in Chromium against the real binary, with two browser contexts signed in as two accounts: the
 * owner invites from the members screen (the link shown once), the invitee (an existing account of another
 * organization) opens the link and joins; a new e-mail's link creates no account, and with one the operator
 * made the person signs in through the link, chooses a password and joins; a revoked link says it cannot be
 * used. Keyboard only on the invitee's side; axe on every new screen in light and dark, on a
 * laptop and a phone. Screenshots under test-results/.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "../../../server/test/support/binary.js";
import {
  type Bootstrapped,
  chromiumAvailable,
  expectAccessible,
  launchChromium,
  openPage,
  ownerSession,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const OWNER_PASSWORD = "owner invites passphrase";
const INVITEE = "invitee@example.com";
const INVITEE_PASSWORD = "invitee own passphrase";

/** axe on the current screen in light and dark, on a laptop and a phone; back to laptop light after. */
async function accessibleEverywhere(page: Page, name: string): Promise<void> {
  for (const [viewport, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await expectAccessible(page, `${viewport}-${colorScheme}-${name}`);
    }
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  await page.emulateMedia({ colorScheme: "light" });
}

async function post(server: Bootstrapped, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

describe.runIf(chromiumAvailable())("invitations: the owner invites, the invitee accepts", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let ownerContext: BrowserContext;
  let inviteeContext: BrowserContext;
  let owner: Page;
  let invitee: Page;
  let problems: string[];
  let link = "";

  beforeAll(async () => {
    server = await startFreshServer();
    browser = await launchChromium();
    const ownerCookie = await ownerSession(server, OWNER_PASSWORD);
    // The invitee: an account of another organization, made by the operator, with a password of its own.
    expect((await cli(server.databaseUrl, ["org", "create", "Elsewhere"])).code).toBe(0);
    const made = await cli(server.databaseUrl, ["user", "create", INVITEE, "--org", "Elsewhere", "--json"]);
    const oneTime = JSON.parse(made.stdout).password as string;
    const signedIn = await post(server, "/api/dashboard/session", { email: INVITEE, password: oneTime });
    const csrf = ((await signedIn.json()) as any).data.csrf_token as string;
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
    const changed = await post(
      server,
      "/api/dashboard/password",
      { new_password: INVITEE_PASSWORD },
      { cookie, "x-csrf-token": csrf },
    );
    const inviteeCookie = changed.headers.get("set-cookie")!.split(";")[0]!.split("=")[1]!;

    ownerContext = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await ownerContext.addCookies([{ name: "ps_session", value: ownerCookie, url: server.url }]);
    ({ page: owner, problems } = await openPage(ownerContext));
    inviteeContext = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await inviteeContext.addCookies([{ name: "ps_session", value: inviteeCookie, url: server.url }]);
    invitee = (await openPage(inviteeContext)).page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const members = () => owner.getByRole("region", { name: "Members" });

  it("the owner invites from the members screen; the link is shown once; the invitation is listed as pending", async () => {
    await owner.goto(`${server.url}/p/${server.projectId}/settings`);
    await members().getByRole("heading", { name: "Invitations" }).waitFor();
    await members().getByText("No invitations yet.").waitFor();
    await members().scrollIntoViewIfNeeded();
    await screenshot(owner, "invitations-01-members-empty");

    const form = members().getByRole("form", { name: "Invite someone" });
    await form.getByLabel("E-mail").fill("not an address");
    await form.getByRole("button", { name: "Invite" }).click();
    await form.getByText("must be an e-mail address").waitFor();
    await screenshot(owner, "invitations-02-form-error");

    await form.getByLabel("E-mail").fill(INVITEE);
    await form.getByLabel("Role").selectOption("viewer");
    await form.getByRole("button", { name: "Invite" }).click();
    const field = members().getByLabel(`Invitation link for ${INVITEE}`);
    await field.waitFor();
    link = await field.inputValue();
    expect(link).toMatch(new RegExp(`^${server.url}/invite#[A-Za-z0-9_-]{43}$`));
    const row = members().getByRole("row", { name: new RegExp(INVITEE) });
    await row.getByText("pending").waitFor();
    await screenshot(owner, "invitations-03-link-shown-once");
    await accessibleEverywhere(owner, "members-invitations");
    expect(problems).toEqual([]);
  });

  it("the invitee, signed in as that e-mail, sees nothing of the organization until they join by keyboard", async () => {
    const before = await (await invitee.request.get(`${server.url}/api/dashboard/session`)).json();
    expect(before.data.memberships.map((m: any) => m.org.name)).toEqual(["Elsewhere"]);

    await invitee.goto(link);
    const join = invitee.getByRole("button", { name: /^Join .+ as viewer$/ });
    await join.waitFor();
    await invitee.getByRole("heading", { name: /^Join .+ as viewer$/ }).waitFor();
    await screenshot(invitee, "invitations-04-accept-signed-in");
    await accessibleEverywhere(invitee, "accept-signed-in");

    await join.focus();
    await invitee.keyboard.press("Enter");
    await invitee.waitForURL((url) => !url.pathname.startsWith("/invite"));
    const after = await (await invitee.request.get(`${server.url}/api/dashboard/session`)).json();
    const joined = after.data.memberships.filter((m: any) => m.org.name !== "Elsewhere");
    expect(joined.map((m: any) => [m.org.id, m.role])).toEqual([[expect.stringMatching(/^org_/), "viewer"]]);
    expect(after.data.memberships).toHaveLength(2);
    await screenshot(invitee, "invitations-05-joined");

    // The owner's list says accepted, and the members include the invitee.
    await owner.reload();
    const row = members()
      .getByRole("row", { name: new RegExp(INVITEE) })
      .filter({ hasText: "accepted" });
    await row.waitFor();
    await members()
      .getByRole("combobox", { name: `Role of ${INVITEE}` })
      .waitFor();
    await screenshot(owner, "invitations-06-accepted");
  });

  it("a new e-mail: the link creates no account; with one the operator made, the person signs in through the link, chooses a password and joins, by keyboard", async () => {
    const form = members().getByRole("form", { name: "Invite someone" });
    await form.getByLabel("E-mail").fill("newcomer@example.com");
    await form.getByLabel("Role").selectOption("editor");
    await form.getByRole("button", { name: "Invite" }).click();
    const newLink = await members().getByLabel("Invitation link for newcomer@example.com").inputValue();

    const fresh = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    try {
      const { page } = await openPage(fresh);
      await page.goto(newLink);
      // Signed out, the page offers sign-in as the invited address, and says who makes accounts.
      await page.getByRole("heading", { name: "No account yet?" }).waitFor();
      const signInLink = page.getByRole("link", { name: "Sign in as newcomer@example.com to accept" });
      await signInLink.waitFor();
      expect(await page.getByLabel(/password/i).count()).toBe(0);
      await screenshot(page, "invitations-07-accept-signed-out");
      await accessibleEverywhere(page, "accept-signed-out");

      // The operator makes the account; the person gets a one-time password.
      const made = await cli(server.databaseUrl, [
        "user",
        "create",
        "newcomer@example.com",
        "--org",
        "Elsewhere",
        "--json",
      ]);
      const oneTime = JSON.parse(made.stdout).password as string;

      await signInLink.focus();
      await page.keyboard.press("Enter");
      await page.getByLabel("E-mail").waitFor();
      await page.getByLabel("E-mail").focus();
      await page.keyboard.type("newcomer@example.com");
      await page.getByLabel("Password", { exact: true }).focus();
      await page.keyboard.type(oneTime);
      await page.keyboard.press("Enter");
      // Back on the invitation: first a password of one's own.
      await page.getByRole("heading", { name: "First, choose your password" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/invite");
      await page.getByLabel("New password", { exact: true }).focus();
      await page.keyboard.type("short");
      await page.getByLabel("Confirm new password").focus();
      await page.keyboard.type("short");
      await page.keyboard.press("Enter");
      await page.getByText("must be at least 12 characters").waitFor();
      await screenshot(page, "invitations-08-password-error");
      await accessibleEverywhere(page, "accept-choose-password");
      for (const label of ["New password", "Confirm new password"]) {
        await page.getByLabel(label, { exact: true }).fill("");
        await page.getByLabel(label, { exact: true }).focus();
        await page.keyboard.type("newcomer passphrase");
      }
      await page.keyboard.press("Enter");
      const join = page.getByRole("button", { name: /^Join .+ as editor$/ });
      await join.waitFor();
      await join.focus();
      await page.keyboard.press("Enter");
      await page.waitForURL((url) => !url.pathname.startsWith("/invite"));
      const session = await (await page.request.get(`${server.url}/api/dashboard/session`)).json();
      expect(session.data.user).toMatchObject({ email: "newcomer@example.com", must_change_password: false });
      const joined = session.data.memberships.filter((m: any) => m.org.name !== "Elsewhere");
      expect(joined.map((m: any) => m.role)).toEqual(["editor"]);
    } finally {
      await fresh.close();
    }
  });

  it("a revoked link says it cannot be used", async () => {
    const form = members().getByRole("form", { name: "Invite someone" });
    await form.getByLabel("E-mail").fill("revoked@example.com");
    await form.getByRole("button", { name: "Invite" }).click();
    const revokedLink = await members().getByLabel("Invitation link for revoked@example.com").inputValue();
    await members().getByRole("button", { name: "Revoke the invitation of revoked@example.com" }).click();
    await owner.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await members()
      .getByRole("row", { name: /revoked@example.com/ })
      .getByText("revoked", { exact: true })
      .waitFor();

    const fresh = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    try {
      const { page } = await openPage(fresh);
      await page.goto(revokedLink);
      await page.getByRole("heading", { name: "This invitation cannot be used" }).waitFor();
      await page.getByText("invitation: was revoked; ask for a new one").waitFor();
      await screenshot(page, "invitations-09-revoked");
      await accessibleEverywhere(page, "accept-revoked");
    } finally {
      await fresh.close();
    }
  });
});
