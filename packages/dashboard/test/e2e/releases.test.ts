/**
 * The release path with two people, in Chromium against the real binary (docs/releases.md): the owner
 * protects production in Settings → Labels; an editor moves staging to a new version and requests a release
 * of production; the owner reads the diff on the Releases screen and approves it with a comment, and the REST
 * read serves the new version. Nobody approves their own request. Then the same without a mouse: a release
 * with a rollout requested, approved, and a rollout on staging started and completed with key presses only.
 * Screenshots and axe on every new screen and dialog, light and dark, laptop and phone.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const PASSWORD = "release path passphrase";
const EDITOR = "editor@example.com";

interface Person {
  context: BrowserContext;
  page: Page;
  problems: string[];
  cookie: string;
}

describe.runIf(chromiumAvailable())("the dashboard, end to end: releases with two people", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let owner: Person;
  let editor: Person;
  const versions: string[] = [];
  let projectPath = "";

  const short = (hash: string) => hash.slice(0, 7);
  const read = async (query = "") => {
    const res = await rest(server, "GET", `/api/v2/prompts/support-bot${query}`);
    // A refusal says so (a read the free plan's rate limit refused was once only "undefined" here).
    if (res.status !== 200) throw new Error(`GET support-bot${query}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as {
      version: string;
      label: string;
      rollout?: { candidate: string; percent: number; arm: string };
    };
  };

  async function signedIn(cookie: string): Promise<Person> {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    const { page, problems } = await openPage(context);
    return { context, page, problems, cookie };
  }

  /** A dashboard API call as a person, with the session's CSRF token. */
  async function asPerson(person: Person, method: string, path: string, body?: unknown) {
    const session = (await (
      await fetch(`${server.url}/api/dashboard/session`, { headers: { cookie: `ps_session=${person.cookie}` } })
    ).json()) as { data: { csrf_token: string; memberships: { org: { id: string } }[] } };
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        cookie: `ps_session=${person.cookie}`,
        "x-csrf-token": session.data.csrf_token,
      },
      ...(method === "GET" ? {} : { body: JSON.stringify(body ?? {}) }),
    });
    return { status: res.status, body: (await res.json()) as any, orgId: session.data.memberships[0]!.org.id };
  }

  async function save(markdown: string, message: string): Promise<string> {
    const saved = await rest(server, "PUT", "/api/v2/prompts/support-bot", server.key, { markdown, message });
    expect(saved.status).toBe(200);
    return saved.body.data.version as string;
  }

  beforeAll(async () => {
    // Unlimited: the polls of reads below, on a loaded machine, once used up the free plan's 60 requests a minute.
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    projectPath = `${server.url}/p/${server.projectId}`;
    browser = await launchChromium();
    owner = await signedIn(await ownerSession(server, PASSWORD));
    // The owner adds an editor, who signs in with the one-time password and chooses their own.
    const orgId = (await asPerson(owner, "GET", "/api/dashboard/session")).orgId;
    const added = await operatorAddsMember(server, orgId, EDITOR, "editor");
    editor = await signedIn(
      await ownerSession({ ...server, owner: { email: EDITOR, password: added.password } }, PASSWORD),
    );

    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      name: "Support Bot",
      markdown: "# Role\nYou help customers of {{ company }}.\n\n# Rules\nBe brief.",
      publish: true,
    });
    expect(created.status).toBe(201);
    versions.push(created.body.data.version);
    versions.push(await save("# Role\nYou help customers of {{ company }}.\n\n# Rules\nBe brief and kind.", "Kinder"));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("the owner protects production and adds staging in Settings → Labels", async () => {
    const { page } = owner;
    await page.goto(`${projectPath}/settings`);
    const card = page.getByRole("region", { name: "Labels" });
    await card.getByRole("button", { name: "Edit production" }).click();
    const dialog = page.getByRole("dialog", { name: "Label production" });
    await dialog.getByLabel("Description").fill("What customers get");
    await dialog.getByRole("checkbox", { name: /Protected/ }).check();
    await expectAccessible(page, "releases-settings-label-dialog");
    await screenshot(page, "releases-01-label-dialog");
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => dialog.count()).toBe(0);

    await card.getByRole("button", { name: "Add label" }).click();
    const add = page.getByRole("dialog", { name: "Add a label" });
    await add.getByLabel("Name").fill("Staging!");
    await add.getByRole("button", { name: "Add label" }).click();
    await expect.poll(() => add.getByText("must start with a lowercase letter", { exact: false }).count()).toBe(1);
    await add.getByLabel("Name").fill("staging");
    await add.getByLabel("Description").fill("Tried here first");
    await add.getByLabel("Falls back to").selectOption("production");
    await add.getByRole("button", { name: "Add label" }).click();
    await expect.poll(() => add.count()).toBe(0);

    const row = (name: string) => card.getByRole("row").filter({ hasText: name });
    await expect.poll(() => row("What customers get").getByText("protected").count()).toBe(1);
    await expect.poll(() => row("Tried here first").getByText("production").count()).toBe(1);
    await expectAccessible(page, "releases-settings-labels");
    await screenshot(page, "releases-02-settings-labels");

    // Protected from now on, for every key too: a direct publish is refused and nothing moves.
    const refused = await rest(server, "POST", "/api/v2/prompts/support-bot/publish", server.key, {
      version: versions[1],
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/^label: production is protected/);
    expect((await read()).version).toBe(versions[0]);
  });

  it("the editor moves staging to the new version and requests a release of production", async () => {
    const { page } = editor;
    await page.goto(`${projectPath}/prompts/support-bot/history`);
    const versionsCard = page.getByRole("region", { name: "Versions" });
    const row = (hash: string) => versionsCard.getByRole("row").filter({ hasText: short(hash) });
    await expect.poll(() => versionsCard.getByLabel("Label", { exact: true }).inputValue()).toBe("staging");

    await row(versions[1]!).getByRole("button", { name: "Move staging here" }).click();
    const move = page.getByRole("dialog", { name: "Move staging to this version?" });
    await move.getByRole("button", { name: "Move staging" }).click();
    await expect.poll(() => page.getByText(`staging is now version ${short(versions[1]!)}.`).count()).toBe(1);
    expect((await read("?version=staging")).version).toBe(versions[1]);
    // The row carries its label now, and the prompt page shows every label with its version.
    await expect.poll(() => row(versions[1]!).getByText("staging", { exact: true }).count()).toBe(1);
    const header = page.locator(".prompt-pointers");
    await expect.poll(() => header.getByText("staging").count()).toBe(1);

    // Production is protected: the row offers a request, not a publish.
    expect(await row(versions[1]!).getByRole("button", { name: "Publish" }).count()).toBe(0);
    await row(versions[1]!).getByRole("button", { name: "Request production release" }).click();
    const ask = page.getByRole("dialog", { name: "Request a release of production" });
    await ask.getByLabel("Message").fill("Kinder rules, tried in staging");
    await expectAccessible(page, "releases-request-dialog");
    await screenshot(page, "releases-03-request-dialog");
    await ask.getByRole("button", { name: "Request release" }).click();
    await expect.poll(() => page.getByText("Release requested: production to", { exact: false }).count()).toBe(1);
    expect((await read()).version).toBe(versions[0]);
    await expectAccessible(page, "releases-history");
    await screenshot(page, "releases-04-history");

    // The prompt list has a column for staging.
    await page.getByRole("link", { name: "Prompts", exact: true }).first().click();
    await page.getByRole("columnheader", { name: "staging" }).waitFor();
    await screenshot(page, "releases-05-prompt-list");
  });

  it("the editor reads the request on Releases but cannot approve it", async () => {
    const { page } = editor;
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Releases" }).click();
    const request = page.getByRole("article").filter({ hasText: "Kinder rules, tried in staging" });
    await request.waitFor();
    expect(await request.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await expectAccessible(page, "releases-screen-editor");
    const release = (await asPerson(editor, "GET", `/api/dashboard/projects/${server.projectId}/releases`)).body.data
      .releases[0];
    const refused = await asPerson(
      editor,
      "POST",
      `/api/dashboard/projects/${server.projectId}/releases/${release.id}/approve`,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("role: editor may not do this; it needs owner");
  });

  it("the owner sees the diff on Releases, approves with a comment, and REST serves the new version", async () => {
    const { page } = owner;
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Releases" }).click();
    const request = page.getByRole("article").filter({ hasText: "Kinder rules, tried in staging" });
    const sections = request.getByRole("list", { name: "Sections" });
    await expect.poll(() => sections.getByText("changed", { exact: true }).count()).toBe(1);
    expect(await sections.locator("ins").allTextContents()).toEqual([expect.stringContaining("and kind")]);
    await expectAccessible(page, "releases-screen-owner");
    await screenshot(page, "releases-06-screen-owner");

    await request.getByLabel("Comment").fill("Reads well");
    await request.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => page.getByText(`Approved: production of support-bot now serves ${short(versions[1]!)}.`).count())
      .toBe(1);
    expect((await read()).version).toBe(versions[1]);
    await expect.poll(() => page.getByRole("heading", { name: "No release is waiting for approval" }).count()).toBe(1);
    await expectAccessible(page, "releases-screen-empty");
    await screenshot(page, "releases-06b-screen-empty");

    await page.getByRole("radio", { name: "Approved" }).check();
    const decided = page.getByRole("article").filter({ hasText: "Reads well" });
    await decided.waitFor();
    expect(await decided.getByText(server.owner.email).count()).toBeGreaterThan(0);
  });

  it("refuses a self-approval: the owner's own request shows the server's refusal", async () => {
    const { page } = owner;
    await page.goto(`${projectPath}/prompts/support-bot/history`);
    const row = page
      .getByRole("region", { name: "Versions" })
      .getByRole("row")
      .filter({ hasText: short(versions[0]!) });
    await row.getByRole("button", { name: "Request production release" }).click();
    const ask = page.getByRole("dialog", { name: "Request a release of production" });
    await ask.getByLabel("Message").fill("Back to the short rules");
    await ask.getByRole("button", { name: "Request release" }).click();
    await expect.poll(() => ask.count()).toBe(0);

    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Releases" }).click();
    const own = page.getByRole("article").filter({ hasText: "Back to the short rules" });
    await own.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => own.getByRole("alert").textContent())
      .toBe("release: you requested this release; someone else must approve it");
    await expectAccessible(page, "releases-screen-refusal");
    await screenshot(page, "releases-07-self-approval-refused");
    expect((await read()).version).toBe(versions[1]);
    // Rejecting one's own request is allowed: it is withdrawn.
    await own.getByLabel("Comment").fill("Withdrawn");
    await own.getByRole("button", { name: "Reject" }).click();
    await expect.poll(() => page.getByText("Rejected the release of production of support-bot.").count()).toBe(1);
  });

  it("requests, approves and rolls out with the keyboard only", async () => {
    versions.push(
      await save("# Role\nYou help customers of {{ company }}.\n\n# Rules\nBe brief, kind, exact.", "Exact"),
    );
    const { page } = editor;
    await page.goto(`${projectPath}/prompts/support-bot/history`);
    const row = page
      .getByRole("region", { name: "Versions" })
      .getByRole("row")
      .filter({ hasText: short(versions[2]!) });

    // The editor asks for 10% of production's reads for the new version.
    await row.getByRole("button", { name: "Request production release" }).focus();
    await page.keyboard.press("Enter");
    const ask = page.getByRole("dialog", { name: "Request a release of production" });
    await expect.poll(() => ask.getByLabel("Message").evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type("Exact rules, carefully");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.type("10");
    await page.keyboard.press("Enter");
    await expect.poll(() => ask.count()).toBe(0);
    await expect
      .poll(() => page.getByText(`for 10% of reads. An owner approves it under Releases.`, { exact: false }).count())
      .toBe(1);

    // The owner approves it.
    await owner.page.goto(`${projectPath}/releases`);
    const request = owner.page.getByRole("article").filter({ hasText: "Exact rules, carefully" });
    await request.getByLabel("Comment").focus();
    await owner.page.keyboard.type("Ten percent first");
    await owner.page.keyboard.press("Tab");
    await owner.page.keyboard.press("Enter");
    await expect
      .poll(async () => (await read("?assign=someone")).rollout)
      .toEqual({ candidate: versions[2], percent: 10, arm: expect.any(String) });

    // The editor rolls the version out on staging (not protected) at 25%, then completes it.
    await page.reload();
    const labels = page.getByRole("region", { name: "Labels and rollouts" });
    await expect.poll(() => labels.getByText("10% of reads", { exact: false }).count()).toBe(1);
    await labels.getByRole("button", { name: "Roll out a version on staging" }).focus();
    await page.keyboard.press("Enter");
    const rollout = page.getByRole("dialog", { name: "Roll out on staging" });
    await expect
      .poll(() => rollout.getByLabel("Share of reads").evaluate((el) => el === document.activeElement))
      .toBe(true);
    // Without a share, the form says what it needs next to the input, and focus stays there.
    await page.keyboard.press("Enter");
    await expect.poll(() => rollout.getByText("must be a whole number from 1 to 100").count()).toBe(1);
    await page.keyboard.type("25");
    await expectAccessible(page, "releases-rollout-dialog");
    await screenshot(page, "releases-08-rollout-dialog");
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await read("?version=staging&assign=a")).rollout?.percent).toBe(25);
    await expect.poll(() => labels.getByText("25% of reads", { exact: false }).count()).toBe(1);
    await expectAccessible(page, "releases-history-rollout");
    await screenshot(page, "releases-09-history-rollout");

    await labels.getByRole("button", { name: "Complete the rollout on staging" }).focus();
    await page.keyboard.press("Enter");
    const complete = page.getByRole("dialog", { name: "Complete the rollout on staging?" });
    await complete.waitFor();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await read("?version=staging")).version).toBe(versions[2]);
    expect((await read("?version=staging")).rollout).toBeUndefined();
  });

  it("the new screens in dark and at phone width", async () => {
    for (const [viewport, scheme] of [
      ["laptop", "dark"],
      ["phone", "light"],
      ["phone", "dark"],
    ] as const) {
      const context = await browser.newContext({ viewport: VIEWPORTS[viewport], colorScheme: scheme });
      try {
        await context.addCookies([{ name: "ps_session", value: owner.cookie, url: server.url }]);
        const { page, problems } = await openPage(context);
        const name = `${viewport}-${scheme}`;
        await page.goto(`${projectPath}/releases?status=all`);
        await page.getByRole("button", { name: "Show the changes" }).first().click();
        await page.getByRole("list", { name: "Sections" }).first().waitFor();
        await expectAccessible(page, `releases-screen-${name}`);
        await screenshot(page, `releases-10-screen-${name}`);

        await page.goto(`${projectPath}/prompts/support-bot/history`);
        const labels = page.getByRole("region", { name: "Labels and rollouts" });
        await expect.poll(() => labels.getByText("10% of reads", { exact: false }).count()).toBe(1);
        await expectAccessible(page, `releases-history-${name}`);
        await screenshot(page, `releases-11-history-${name}`);
        await labels.getByRole("button", { name: "Change the rollout on production" }).click();
        await page.getByRole("dialog", { name: "Request a release of production" }).waitFor();
        await expectAccessible(page, `releases-request-dialog-${name}`);
        await screenshot(page, `releases-12-request-dialog-${name}`);
        await page.keyboard.press("Escape");

        await page.goto(`${projectPath}/settings`);
        await page.getByRole("region", { name: "Labels" }).getByText("Tried here first").waitFor();
        await expectAccessible(page, `releases-settings-${name}`);
        await screenshot(page, `releases-13-settings-${name}`);

        await page.goto(`${projectPath}/prompts`);
        await page.getByRole("columnheader", { name: "staging" }).waitFor({ state: "attached" });
        await page.getByRole("link", { name: "Support Bot" }).waitFor();
        await screenshot(page, `releases-14-prompt-list-${name}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it("removes staging from the prompt with the keyboard: it falls back to production, as its settings say", async () => {
    const { page } = editor;
    await page.goto(`${projectPath}/prompts/support-bot/history`);
    const labels = page.getByRole("region", { name: "Labels and rollouts" });
    await labels.getByRole("button", { name: "Remove staging from this prompt" }).focus();
    await page.keyboard.press("Enter");
    const remove = page.getByRole("dialog", { name: "Remove staging from this prompt?" });
    await remove.waitFor();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await read("?version=staging")).label).toBe("production");
    expect(await read("?version=staging")).toMatchObject({ fallback_for: "staging" });
  });

  it("the browsers reported no errors and no Content-Security-Policy refusals", () => {
    expect(owner.problems).toEqual([]);
    expect(editor.problems).toEqual([]);
  });
});
