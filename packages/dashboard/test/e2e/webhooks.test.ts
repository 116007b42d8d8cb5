/**
 * Webhooks in the project settings, in Chromium against the real binary and a real receiver on loopback:
 * the empty state, adding an endpoint (the secret shown once, then never), the list, a change that is
 * delivered and verified with that secret, the deliveries, editing, removing; an editor sees the webhooks and
 * nothing else of the settings. Screenshots of each state under test-results/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EVENT_TYPES } from "@promptstore/core/events";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, startServer } from "../../../server/test/support/binary.js";
import { freePort, type Receiver, startReceiver, verify } from "../../../server/test/webhooks/receiver.js";
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

const PASSWORD = "webhooks passphrase";

describe.runIf(chromiumAvailable())("webhooks in the project settings", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let cookie: string;
  let receiver: Receiver;
  let secret = "";
  let settings: string;

  beforeAll(async () => {
    server = await startFreshServer({
      PROMPTSTORE_DEFAULT_PLAN: "unlimited",
      PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: "true",
      PROMPTSTORE_WEBHOOK_RETRY_SCALE: "0.001",
    });
    // The first request fails, so the deliveries show a retry.
    receiver = await startReceiver((_req, index) => (index === 0 ? 500 : 204));
    browser = await launchChromium();
    cookie = await ownerSession(server, PASSWORD);
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    ({ page, problems } = await openPage(context));
    settings = `${server.url}/p/${server.projectId}/settings`;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  const section = () => page.getByRole("region", { name: "Webhooks" });

  it("shows the empty state", async () => {
    await page.goto(settings);
    await section().getByRole("heading", { name: "No webhooks yet" }).waitFor();
    expect(await section().getByText("0 of 20 endpoints", { exact: false }).count()).toBe(1);
    await section().scrollIntoViewIfNeeded();
    await screenshot(page, "webhooks-01-empty");
  });

  it("adds an endpoint: the form checks the URL, and the secret is shown once", async () => {
    await section().getByRole("button", { name: "Add endpoint" }).click();
    const dialog = page.getByRole("dialog", { name: "Add an endpoint" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => dialog.getByText("must be an absolute http:// or https:// URL").count()).toBe(1);
    await dialog.getByLabel("URL").fill("ftp://files.example.com/hook");
    await dialog.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => dialog.getByText("must be an http:// or https:// URL").count()).toBe(1);
    await screenshot(page, "webhooks-02-form-error");
    await expectAccessible(page, "laptop-light-webhook-form-error");

    await dialog.getByLabel("URL").fill(receiver.url);
    await dialog.getByLabel("Description").fill("Deploy bot");
    await dialog.getByLabel(/Version saved/).uncheck();
    await dialog.getByRole("button", { name: "Add endpoint" }).click();

    const shown = page.getByRole("dialog", { name: "Your new endpoint's signing secret" });
    await shown.waitFor();
    secret = await shown.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await screenshot(page, "webhooks-03-secret-shown-once");
    await expectAccessible(page, "laptop-light-webhook-secret");
    await shown.getByRole("button", { name: "Done" }).click();
    await shown.waitFor({ state: "detached" });

    // Gone from the page and from every answer.
    expect(await page.content()).not.toContain(secret);
    const listed = await rest(server, "GET", "/api/v2/webhooks");
    expect(listed.body.data.webhooks).toEqual([
      {
        id: expect.stringMatching(/^whk_/),
        url: receiver.url,
        description: "Deploy bot",
        // Every type but the one unticked, in their order.
        events: EVENT_TYPES.filter((type) => type !== "prompt.version_saved"),
        enabled: true,
        secret_needs_rotation: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");
  });

  it("lists the endpoint with its events and status", async () => {
    const row = section().getByRole("row").filter({ hasText: receiver.url });
    await row.waitFor();
    expect(await row.getByText("Deploy bot").count()).toBe(1);
    expect(await row.getByText("Prompt created").count()).toBe(1);
    expect(await row.getByText("Published").count()).toBe(1);
    expect(await row.getByText("Version saved").count()).toBe(0);
    expect(await row.getByText("enabled").count()).toBe(1);
    expect(await section().getByText("1 of 20 endpoints", { exact: false }).count()).toBe(1);
    await section().scrollIntoViewIfNeeded();
    await screenshot(page, "webhooks-04-list");
  });

  it("delivers a change, signed with the secret shown, and lists the deliveries with the retry", async () => {
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name: "Support bot",
      markdown: "# Role\nYou help.",
      publish: true,
    });
    expect(created.status).toBe(201);
    await rest(server, "PUT", "/api/v2/prompts/support-bot", server.key, { markdown: "# Role\nYou help, warmly." });
    await rest(server, "POST", "/api/v2/prompts/support-bot/publish", server.key, {});
    await expect.poll(() => receiver.delivered().length, { timeout: 15_000 }).toBe(2);
    const bodies = receiver.delivered().map((r) => verify(secret, r) as { type: string; data: { prompt_id: string } });
    expect(bodies.map((b) => `${b.type} ${b.data.prompt_id}`)).toEqual([
      "prompt.created support-bot",
      "prompt.published support-bot",
    ]);
    expect(receiver.requests.map((r) => r.status)).toEqual([500, 204, 204]);

    await section()
      .getByRole("button", { name: `Deliveries to ${receiver.url}` })
      .click();
    const dialog = page.getByRole("dialog", { name: "Recent deliveries" });
    await dialog.waitFor();
    const rows = dialog.getByRole("row");
    await expect.poll(() => rows.count()).toBe(3);
    // The list refreshes every 5 s; the last outcome may be recorded just after the receiver answered.
    await expect.poll(() => dialog.getByText("delivered", { exact: true }).count(), { timeout: 15_000 }).toBe(2);
    expect(await dialog.getByText("2 attempts").count()).toBe(1);
    expect(await dialog.getByText("HTTP 204").count()).toBe(2);
    await screenshot(page, "webhooks-05-deliveries");
    await dialog.getByRole("button", { name: "Close" }).click();
  });

  it("edits and disables the endpoint, then removes it", async () => {
    await section()
      .getByRole("button", { name: `Edit ${receiver.url}` })
      .click();
    const dialog = page.getByRole("dialog", { name: "Edit endpoint" });
    await dialog.waitFor();
    expect(await dialog.getByLabel("URL").inputValue()).toBe(receiver.url);
    await dialog.getByLabel("Description").fill("Deploy bot (paused)");
    await dialog.getByLabel(/^Enabled/).uncheck();
    await screenshot(page, "webhooks-06-edit");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "detached" });
    await expect
      .poll(async () => (await rest(server, "GET", "/api/v2/webhooks")).body.data.webhooks[0])
      .toMatchObject({ description: "Deploy bot (paused)", enabled: false });
    const row = section().getByRole("row").filter({ hasText: receiver.url });
    await expect.poll(() => row.getByText("disabled").count()).toBe(1);

    await row.getByRole("button", { name: `Remove ${receiver.url}` }).click();
    await page.getByRole("dialog", { name: "Remove this endpoint?" }).getByRole("button", { name: "Remove" }).click();
    await section().getByRole("heading", { name: "No webhooks yet" }).waitFor();
    expect((await rest(server, "GET", "/api/v2/webhooks")).body.data.webhooks).toEqual([]);
  });

  it("fits a phone in light and dark, the list and the deliveries of an endpoint that is down", async () => {
    // Nothing listens there: its delivery is retried, and the list says why.
    const longUrl = `http://127.0.0.1:${await freePort()}/hook?team=support&channel=prompt-changes-with-a-long-name`;
    await rest(server, "POST", "/api/v2/webhooks", server.key, {
      url: longUrl,
      events: [...EVENT_TYPES],
      description: "A receiver with a long address",
    });
    await rest(server, "PUT", "/api/v2/prompts/support-bot", server.key, { markdown: "# Role\nYou help, briefly." });
    for (const scheme of ["light", "dark"] as const) {
      const phone = await browser.newContext({ viewport: VIEWPORTS.phone, colorScheme: scheme });
      try {
        await phone.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
        const { page: small, problems: smallProblems } = await openPage(phone);
        await small.goto(settings);
        const region = small.getByRole("region", { name: "Webhooks" });
        await region.getByText("A receiver with a long address").waitFor();
        await small.waitForLoadState("networkidle");
        await screenshot(small, `webhooks-07-phone-${scheme}`);
        await expectAccessible(small, `phone-${scheme}-webhooks-failing`);
        const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await region.getByRole("button", { name: `Deliveries to ${longUrl}` }).click();
        const dialog = small.getByRole("dialog", { name: "Recent deliveries" });
        await dialog.getByText("pending", { exact: true }).waitFor();
        await dialog.getByText("connection refused (ECONNREFUSED)").waitFor();
        expect(await dialog.getByText("no answer", { exact: true }).count()).toBe(1);
        await small.screenshot({ path: `${process.cwd()}/test-results/webhooks-08-phone-deliveries-${scheme}.png` });
        await expectAccessible(small, `phone-${scheme}-webhook-deliveries`);
        expect(smallProblems).toEqual([]);
      } finally {
        await phone.close();
      }
    }
  });

  it("an editor sees the webhooks and nothing else of the settings", async () => {
    const owner = await fetch(`${server.url}/api/dashboard/session`, { headers: { cookie: `ps_session=${cookie}` } });
    const session = ((await owner.json()) as any).data;
    const editor = await operatorAddsMember(server, session.memberships[0].org.id, "editor@example.com", "editor");
    const editorCookie = await ownerSession(
      { ...server, owner: { email: "editor@example.com", password: editor.password } },
      "editor passphrase",
    );
    const editorContext = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    try {
      await editorContext.addCookies([{ name: "ps_session", value: editorCookie, url: server.url }]);
      const { page: editorPage, problems: editorProblems } = await openPage(editorContext);
      await editorPage.goto(`${server.url}/p/${server.projectId}/prompts`);
      await editorPage.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Settings" }).click();
      await editorPage.getByRole("heading", { name: "Webhooks" }).waitFor();
      expect(await editorPage.getByRole("heading", { name: "API keys" }).count()).toBe(0);
      expect(await editorPage.getByRole("heading", { name: "Members" }).count()).toBe(0);
      await editorPage.getByText("A receiver with a long address").waitFor();
      await screenshot(editorPage, "webhooks-09-editor");
      expect(editorProblems).toEqual([]);
    } finally {
      await editorContext.close();
    }
  });

  it("an endpoint restored under another secret key says its secret needs rotating, and how", async () => {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-e2e-rekey-"));
    const file = join(dir, "store.backup");
    const target = join(dir, "restored.sqlite");
    const env = { PROMPTSTORE_SECRET_KEY: "feedface".repeat(8), PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: "true" };
    expect((await cli(server.databaseUrl, ["backup", file])).code).toBe(0);
    expect((await cli(target, ["restore", file], env)).code).toBe(0);
    const restored = await startServer(target, env);
    const rekeyed = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    try {
      const signedIn = await fetch(`${restored.url}/api/dashboard/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: server.owner.email, password: PASSWORD }),
      });
      expect(signedIn.status).toBe(200);
      const session = (signedIn.headers.get("set-cookie") as string).split(";")[0]?.split("=")[1] as string;
      await rekeyed.addCookies([{ name: "ps_session", value: session, url: restored.url }]);
      const { page: after, problems: afterProblems } = await openPage(rekeyed);
      await after.goto(`${restored.url}/p/${server.projectId}/settings`);
      const region = after.getByRole("region", { name: "Webhooks" });
      const row = region.getByRole("row").filter({ hasText: "A receiver with a long address" });
      await row.getByText("secret needs rotating", { exact: true }).waitFor();
      expect(
        await row.getByText("Rotate it under Edit, then give the receiver the new one.", { exact: false }).count(),
      ).toBe(1);
      await region.scrollIntoViewIfNeeded();
      await screenshot(after, "webhooks-10-secret-needs-rotating");
      await expectAccessible(after, "webhooks-secret-needs-rotating");
      expect(afterProblems).toEqual([]);
    } finally {
      await rekeyed.close();
      await restored.stop("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the browser reported no errors and no Content-Security-Policy refusals", () => {
    expect(problems).toEqual([]);
  });
});
