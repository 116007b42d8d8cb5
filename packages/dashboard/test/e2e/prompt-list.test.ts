/**
 * The prompt list a page at a time, searched by the server (issue 22), in Chromium against the real binary:
 * 130 prompts, a search that matches 91 of them (by name, by id, in any case) paged 50 at a time with the
 * server's counts; the address holds the search and the page; a page past the end leads to the last one; a
 * deletion refreshes every page held, searches included; every request asks for one page, never the whole
 * list. Screenshots of the search's second page in both themes, laptop and phone, each checked by axe.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
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

const PROMPTS = 130;
const n3 = (n: number) => String(n).padStart(3, "0");

/**
 * Prompt n of the seed. Every id starts with its number, so the list's order (oldest first, then by id) is
 * the order of n whatever the clock did. "support" is in the name of the even ones, in the id alone of those
 * ending in 3, in capitals in the name of those ending in 5; the rest do not have it.
 */
function seeded(n: number): { id: string; name: string; matches: boolean } {
  if (n % 2 === 0) return { id: `x-${n3(n)}-bot`, name: `Support bot ${n3(n)}`, matches: true };
  if (n % 10 === 3) return { id: `x-${n3(n)}-support-escalations`, name: `Escalations ${n3(n)}`, matches: true };
  if (n % 10 === 5) return { id: `x-${n3(n)}-triage`, name: `SUPPORT triage ${n3(n)}`, matches: true };
  return { id: `x-${n3(n)}-billing`, name: `Billing helper ${n3(n)}`, matches: false };
}

const ALL = Array.from({ length: PROMPTS }, (_, n) => seeded(n));
const SUPPORT = ALL.filter((p) => p.matches);
/** How long a screen may take to settle on a loaded machine: a bound on waiting, not a measure of speed. */
const SETTLE = { timeout: 15_000 };

describe.runIf(chromiumAvailable())("the prompt list, a page at a time, searched by the server", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let cookie: string;
  let listUrl: string;
  /** Every request the app made for the list: the query of each. */
  const asked: URLSearchParams[] = [];

  beforeAll(async () => {
    server = await startFreshServer({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    for (const [n, p] of ALL.entries()) {
      const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
        id: p.id,
        name: p.name,
        markdown: `# Role\nYou help {{ customer }} with case ${n}.`,
        publish: n % 4 === 0,
      });
      expect(created.status, p.id).toBe(201);
    }
    // Two labels in use, on prompts of both pages of the search.
    for (const [id, label] of [
      ["x-000-bot", "staging"],
      ["x-103-support-escalations", "eu-west"],
      ["x-104-bot", "staging"],
    ] as const) {
      expect((await rest(server, "POST", `/api/v2/prompts/${id}/publish`, server.key, { label })).status).toBe(200);
    }
    expect(SUPPORT).toHaveLength(91);

    browser = await launchChromium();
    cookie = await ownerSession(server, "list passphrase");
    context = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    ({ page, problems } = await openPage(context));
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (request.method() === "GET" && /^\/api\/dashboard\/projects\/[^/]+\/prompts$/.test(url.pathname)) {
        asked.push(url.searchParams);
      }
    });
    listUrl = `${server.url}/p/${server.projectId}/prompts`;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const list = (p: Page = page) => p.getByRole("region", { name: "Prompt list" });
  const search = (p: Page = page) => list(p).getByRole("searchbox", { name: "Search prompts" });
  const pager = (p: Page = page) => list(p).getByRole("navigation", { name: "Pages" });

  /** What the screen shows of the list: enough to compare with what it must show, exactly. */
  async function shown(p: Page = page) {
    const url = new URL(p.url());
    const status = list(p).locator(".list-toolbar [role=status]");
    return {
      address: `${url.pathname.replace(/^\/p\/[^/]+/, "")}${url.search}`,
      heading: await p.locator(".page-header p").textContent(),
      status: (await status.count()) === 1 ? await status.textContent() : null,
      range: (await pager(p).count()) === 1 ? await pager(p).locator("> span").first().textContent() : null,
      page:
        (await pager(p)
          .getByText(/^Page /)
          .count()) === 1
          ? await pager(p)
              .getByText(/^Page /)
              .textContent()
          : null,
      names: await list(p).locator("tbody .prompt-name").allTextContents(),
      busy: await list(p).getAttribute("aria-busy"),
    };
  }

  it("shows the first page of every prompt with the server's counts, and a column per label in use", async () => {
    await page.goto(listUrl);
    await expect
      .poll(() => shown(), SETTLE)
      .toEqual({
        address: "/prompts",
        heading: "Default project · 130 prompts",
        status: null,
        range: "1–50 of 130",
        page: "Page 1 of 3",
        names: ALL.slice(0, 50).map((p) => p.name),
        busy: "false",
      });
    expect(await list().locator("thead th").allTextContents()).toEqual([
      "Prompt",
      "Production",
      "Latest",
      "eu-west",
      "staging",
      "Variables",
    ]);
    expect(await pager().getByRole("button", { name: "Previous" }).isDisabled()).toBe(true);
  });

  /** A fresh page's requests for the session and the list, and the session's answer, in the order they came. */
  async function firstLoad(withCookie: boolean, address: string) {
    const fresh = await browser.newContext({ viewport: VIEWPORTS.laptop, colorScheme: "light" });
    if (withCookie) await fresh.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    const opened = await openPage(fresh);
    const seen: string[] = [];
    const kind = (url: string) =>
      new URL(url).pathname === "/api/dashboard/session"
        ? "session"
        : /^\/api\/dashboard\/projects\/[^/]+\/prompts$/.test(new URL(url).pathname)
          ? `list?${new URL(url).searchParams}`
          : null;
    opened.page.on("request", (r) => {
      const k = kind(r.url());
      if (k) seen.push(`asked ${k}`);
    });
    opened.page.on("response", (r) => {
      const k = kind(r.url());
      if (k) seen.push(`answered ${k} ${r.status()}`);
    });
    await opened.page.goto(`${server.url}${address}`);
    return { ...opened, fresh, seen };
  }

  it("on the app's first load, asks for the list beside the session, once; a visitor's early answer is dropped", async () => {
    const signedIn = await firstLoad(true, `/p/${server.projectId}/prompts?page=2`);
    try {
      await expect
        .poll(() => shown(signedIn.page), SETTLE)
        .toMatchObject({ range: "51–100 of 130", names: ALL.slice(50, 100).map((p) => p.name), busy: "false" });
      // Both leave before either answers (the list does not wait for the session's round trip), and the list
      // once: the screen takes the early answer, it does not ask again.
      expect(signedIn.seen.slice(0, 2)).toEqual(["asked session", "asked list?q=&page=2&per_page=50"]);
      expect([...signedIn.seen].sort()).toEqual([
        "answered list?q=&page=2&per_page=50 200",
        "answered session 200",
        "asked list?q=&page=2&per_page=50",
        "asked session",
      ]);
      expect(signedIn.problems).toEqual([]);
    } finally {
      await signedIn.fresh.close();
    }

    const visitor = await firstLoad(false, `/p/${server.projectId}/prompts?page=2`);
    try {
      await visitor.page.getByRole("heading", { name: "Sign in" }).waitFor(SETTLE);
      // The way back survives the list's 401: it neither ended a session nor showed an error.
      expect(new URL(visitor.page.url()).searchParams.get("next")).toBe(`/p/${server.projectId}/prompts?page=2`);
      expect(visitor.seen.sort()).toEqual([
        "answered list?q=&page=2&per_page=50 401",
        "answered session 401",
        "asked list?q=&page=2&per_page=50",
        "asked session",
      ]);
      expect(await visitor.page.getByText("Could not reach Promptstore").count()).toBe(0);
      expect(visitor.problems).toEqual([]);
    } finally {
      await visitor.fresh.close();
    }
  });

  it("searches as the person types and pages through the server's matches", async () => {
    await search().click();
    const before = asked.length;
    await page.keyboard.type("Support");
    const firstPage = {
      address: "/prompts?q=Support",
      heading: "Default project · 130 prompts",
      status: "91 of 130",
      range: "1–50 of 91",
      page: "Page 1 of 2",
      names: SUPPORT.slice(0, 50).map((p) => p.name),
      busy: "false",
    };
    await expect.poll(() => shown(), SETTLE).toEqual(firstPage);
    // The ends of the page, written out: by name, by id alone, in capitals.
    expect(firstPage.names.slice(0, 6)).toEqual([
      "Support bot 000",
      "Support bot 002",
      "Escalations 003",
      "Support bot 004",
      "SUPPORT triage 005",
      "Support bot 006",
    ]);
    expect(firstPage.names[49]).toBe("Support bot 070");
    // Typed faster than the pause the list waits for: one search sent, not one per key (a search reads every
    // name of the project; one per key made a 100 000-prompt project's search take 2.5 s, not 0.5).
    expect(asked.slice(before).map((q) => q.toString())).toEqual(["q=Support&page=1&per_page=50"]);

    await pager().getByRole("button", { name: "Next" }).click();
    const secondPage = {
      ...firstPage,
      address: "/prompts?q=Support&page=2",
      range: "51–91 of 91",
      page: "Page 2 of 2",
      names: SUPPORT.slice(50).map((p) => p.name),
    };
    await expect.poll(() => shown(), SETTLE).toEqual(secondPage);
    expect(secondPage.names).toHaveLength(41);
    expect([secondPage.names[0], secondPage.names[40]]).toEqual(["Support bot 072", "Support bot 128"]);
    expect(await pager().getByRole("button", { name: "Next" }).isDisabled()).toBe(true);
    // The label columns are the project's, whichever page is shown; a row without the label says so.
    const row = list().getByRole("row").filter({ hasText: "Escalations 103" });
    expect(await row.locator("td[data-label=eu-west] .hash").count()).toBe(1);
    expect(await row.locator("td[data-label=staging]").textContent()).toBe("not set");

    await pager().getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => shown(), SETTLE).toEqual(firstPage);

    // The address is the state: opened as a link, the same page of the same search.
    await page.goto(`${listUrl}?q=support&page=2`);
    await expect.poll(() => shown(), SETTLE).toEqual({ ...secondPage, address: "/prompts?q=support&page=2" });
    expect(await search().inputValue()).toBe("support");

    // Asked of the server one page at a time, 50 a page, never the whole list; a search only as typed.
    expect(asked.length).toBeGreaterThan(0);
    for (const query of asked) {
      expect([...query.keys()].sort()).toEqual(["page", "per_page", "q"]);
      expect(query.get("per_page")).toBe("50");
      expect("Support".startsWith(query.get("q") ?? "?") || query.get("q") === "support").toBe(true);
    }
    expect(asked.map((q) => q.toString())).toContain("q=Support&page=2&per_page=50");
    expect(problems).toEqual([]);
  });

  it("closes the request of a search it moved on from, so the server stops reading for it", async () => {
    const other = await openPage(context);
    const held: string[] = [];
    const failed: string[] = [];
    try {
      // The server's answer to "Bill" never comes while the test holds it: the screen moves on to "Billing" first.
      await other.page.route(
        (url) => url.pathname.endsWith("/prompts") && url.searchParams.get("q") === "Bill",
        (route) => {
          held.push(new URL(route.request().url()).search);
        },
      );
      other.page.on("requestfailed", (request) => {
        if (new URL(request.url()).searchParams.get("q") === "Bill") failed.push(request.failure()?.errorText ?? "");
      });
      await other.page.goto(listUrl);
      await expect.poll(() => shown(other.page), SETTLE).toMatchObject({ range: "1–50 of 130", busy: "false" });
      await search(other.page).click();
      await other.page.keyboard.type("Bill");
      await expect.poll(() => held, SETTLE).toEqual(["?q=Bill&page=1&per_page=50"]);
      await other.page.keyboard.type("ing");
      const billing = ALL.filter((p) => /billing/i.test(p.name) || /billing/i.test(p.id));
      await expect
        .poll(() => shown(other.page), SETTLE)
        .toMatchObject({
          address: "/prompts?q=Billing",
          status: `${billing.length} of 130`,
          names: billing.slice(0, 50).map((p) => p.name),
          busy: "false",
        });
      // The held request was closed by the browser (TanStack Query's signal), not left open.
      await expect.poll(() => failed, SETTLE).toEqual(["net::ERR_ABORTED"]);
      expect(other.problems).toEqual([]);
    } finally {
      await other.page.unrouteAll({ behavior: "ignoreErrors" });
      await other.page.close();
    }
  });

  it("says when nothing matches, and clears the search", async () => {
    await search().fill("no such prompt");
    await expect.poll(() => list().getByRole("heading", { name: "No matching prompts" }).count(), SETTLE).toBe(1);
    expect(await list().getByText("No prompt has “no such prompt” in its name or id.").count()).toBe(1);
    expect(await list().locator(".list-toolbar [role=status]").textContent()).toBe("0 of 130");
    expect(new URL(page.url()).search).toBe("?q=no+such+prompt");
    await list().getByRole("button", { name: "Clear search" }).click();
    await expect
      .poll(() => shown(), SETTLE)
      .toEqual({
        address: "/prompts",
        heading: "Default project · 130 prompts",
        status: null,
        range: "1–50 of 130",
        page: "Page 1 of 3",
        names: ALL.slice(0, 50).map((p) => p.name),
        busy: "false",
      });
    expect(await search().inputValue()).toBe("");
  });

  it("leads a page past the end to the last page", async () => {
    await page.goto(`${listUrl}?page=9`);
    await expect
      .poll(() => shown(), SETTLE)
      .toEqual({
        address: "/prompts?page=3",
        heading: "Default project · 130 prompts",
        status: null,
        range: "101–130 of 130",
        page: "Page 3 of 3",
        names: ALL.slice(100).map((p) => p.name),
        busy: "false",
      });
  });

  it("after a deletion shows every page anew, a search held from before included", async () => {
    // Both held, and fresh: without the deletion they would be shown from memory.
    await page.goto(`${listUrl}?q=support`);
    await expect.poll(() => list().locator(".list-toolbar [role=status]").textContent(), SETTLE).toBe("91 of 130");
    await list().getByRole("link", { name: "Support bot 000" }).click();
    await page.getByRole("heading", { name: "Support bot 000" }).waitFor();
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this prompt?" });
    await dialog.getByLabel("Type x-000-bot to confirm").fill("x-000-bot");
    await dialog.getByRole("button", { name: "Delete prompt" }).click();
    await page.waitForURL(listUrl);
    await expect
      .poll(() => shown(), SETTLE)
      .toEqual({
        address: "/prompts",
        heading: "Default project · 129 prompts",
        status: null,
        range: "1–50 of 129",
        page: "Page 1 of 3",
        names: ALL.slice(1, 51).map((p) => p.name),
        busy: "false",
      });
    await search().fill("support");
    await expect
      .poll(() => shown(), SETTLE)
      .toEqual({
        address: "/prompts?q=support",
        heading: "Default project · 129 prompts",
        status: "90 of 129",
        range: "1–50 of 90",
        page: "Page 1 of 2",
        names: SUPPORT.slice(1, 51).map((p) => p.name),
        busy: "false",
      });
    expect((await rest(server, "GET", "/api/v2/prompts/x-000-bot")).status).toBe(404);
    expect(problems).toEqual([]);
  });

  for (const [viewport, size] of Object.entries(VIEWPORTS)) {
    for (const scheme of ["light", "dark"] as const) {
      it(`the search's second page, ${viewport}, ${scheme}`, async () => {
        const other = await browser.newContext({ viewport: size, colorScheme: scheme });
        try {
          await other.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
          const opened = await openPage(other);
          const p = opened.page;
          await p.goto(`${listUrl}?q=support&page=2`);
          await expect
            .poll(() => shown(p), SETTLE)
            .toEqual({
              address: "/prompts?q=support&page=2",
              heading: "Default project · 129 prompts",
              status: "90 of 129",
              range: "51–90 of 90",
              page: "Page 2 of 2",
              names: SUPPORT.slice(51).map((s) => s.name),
              busy: "false",
            });
          await screenshot(p, `prompt-list-${viewport}-${scheme}-search-page-2`);
          await expectAccessible(p, `prompt-list-${viewport}-${scheme}-search-page-2`);
          const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          expect(overflow, `the list is wider than the ${viewport} screen`).toBeLessThanOrEqual(0);
          expect(opened.problems).toEqual([]);
        } finally {
          await other.close();
        }
      });
    }
  }
});
