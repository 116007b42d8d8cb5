/**
 * The Production view end to end (issue 40, "Seeing it"), in Chromium against the real binary: outcomes with
 * known numbers are reported through `POST /api/v2/outcomes` with a key, and the view shows exactly those
 * figures per version and label, a chart with its data table, a rollout's two arms with the ok rate's
 * difference and its always-valid 95% interval (the same numbers core's `evaluateGuardrails` gives the
 * server), and the fleet. Also the empty state, dark theme and phone width. Screenshots and axe of each.
 */
import { evaluateGuardrails } from "@promptstore/core/rollouts/guardrails";
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

const PASSWORD = "production passphrase";

const points = (v: number) => `${v < 0 ? "−" : v > 0 ? "+" : ""}${Math.abs(v * 100).toFixed(1)} pts`;

describe.runIf(chromiumAvailable())("the dashboard, end to end: the Production view", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let cookie: string;
  let v1 = "";
  let v2 = "";
  let base = "";
  const problems: string[] = [];

  const report = async (outcomes: unknown[], instance: { id: string; version: string }) => {
    const res = await rest(server, "POST", "/api/v2/outcomes", server.key, {
      outcomes,
      instance: {
        id: instance.id,
        sdk: "e2e/1",
        serving: [{ prompt: "support", label: "production", version: instance.version }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data?.refused ?? res.body.refused).toEqual([]);
  };

  const open = async (path: string, options: { scheme?: "light" | "dark"; phone?: boolean } = {}): Promise<Page> => {
    const context = await browser.newContext({
      viewport: options.phone ? VIEWPORTS.phone : VIEWPORTS.laptop,
      colorScheme: options.scheme ?? "light",
    });
    await context.addCookies([{ name: "ps_session", value: cookie, url: server.url }]);
    const opened = await openPage(context);
    opened.page.setDefaultTimeout(15_000);
    opened.page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    await opened.page.goto(`${server.url}${path}`);
    return opened.page;
  };

  beforeAll(async () => {
    server = await startFreshServer();
    cookie = await ownerSession(server, PASSWORD);
    base = `/p/${server.projectId}/prompts`;
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help customers." }],
      publish: true,
    });
    expect(created.status).toBe(201);
    v1 = created.body.data.version;
    const empty = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "quiet",
      name: "Quiet",
      sections: [{ title: "Role", content: "Nobody reads me." }],
      publish: true,
    });
    expect(empty.status).toBe(201);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("says how to report outcomes while there are none (empty state), and the fleet is empty", async () => {
    const page = await open(`${base}/quiet/production`);
    await page.getByRole("heading", { name: "No outcomes in the last 24 h" }).waitFor();
    expect(await page.locator(".production-snippet").textContent()).toBe(
      "// TypeScript\npromptstore.record(prompt, { ok: true, latency_ms: 812 });\n# Python\nclient.record(prompt, ok=True, latency_ms=812)",
    );
    await page.getByText("No instance reported in the last 5 minutes.", { exact: false }).waitFor();
    await expectAccessible(page, "production-empty");
    await screenshot(page, "production-01-empty");
    await page.context().close();
  });

  it("shows the exact numbers reported per version and label, with a chart and its data table", async () => {
    const at = new Date().toISOString();
    // 10 outcomes of production's v1: 8 ok; 4 with a score (0.5, 0.5, 1, 1 → 0.75); 100 + 20 tokens each.
    const outcomes = Array.from({ length: 10 }, (_, i) => ({
      prompt: "support",
      version: v1,
      label: "production",
      ok: i < 8,
      latency_ms: 200,
      ...(i < 4 ? { score: i < 2 ? 0.5 : 1 } : {}),
      tokens: { input: 100, output: 20 },
      at,
    }));
    await report(outcomes, { id: "instance-a", version: v1 });
    await expect
      .poll(
        async () =>
          (await rest(server, "GET", "/api/v2/prompts/support/outcomes?by=label")).body.data?.series?.[0]?.totals
            ?.count,
      )
      .toBe(10);
    const read = (await rest(server, "GET", "/api/v2/prompts/support/outcomes?by=label")).body.data.series[0].totals;

    const page = await open(`${base}/support/production`);
    const totals = page.getByRole("region", { name: "By version and label" });
    await totals.getByRole("table").waitFor();
    const cells = await totals.locator("tbody tr").first().locator("th, td").allTextContents();
    expect(cells).toEqual([
      v1.slice(0, 7),
      "production",
      "10",
      "80.0%",
      "0.75",
      `${Math.round(read.latency_p50)} ms`,
      `${Math.round(read.latency_p95)} ms`,
      "1,200",
    ]);
    const chart = page.getByRole("img", { name: /^Traffic over time\./ });
    await chart.waitFor();
    expect(await chart.getAttribute("aria-label")).toBe(
      `Traffic over time. 1 series. ${v1.slice(0, 7)} · production: 10 over the range. The numbers are in the table below.`,
    );
    await expect.poll(() => chart.locator("svg .recharts-line").count()).toBe(1);
    await page.getByText("Show the data (per hour)").click();
    // The data table: one step with the 10 outcomes.
    const data = page.locator(".production-data tbody tr");
    expect(await data.count()).toBe(1);
    expect(await data.first().locator("td").allTextContents()).toEqual(["10"]);
    await page.getByLabel("Metric").selectOption("ok_rate");
    await page.getByRole("img", { name: /^Ok rate over time\./ }).waitFor();
    expect(await data.first().locator("td").allTextContents()).toEqual(["80.0%"]);
    await expectAccessible(page, "production-numbers");
    await screenshot(page, "production-02-numbers");

    // The 1 h range asks by the minute.
    // a click, not check(): the radio is checked by the address, once the router has moved to it
    await page.getByLabel("Last 1 h").click();
    await page.waitForURL(/range=1h/);
    // The address changes first; the switch shows it on the render that follows.
    await expect.poll(() => page.getByLabel("Last 1 h").isChecked()).toBe(true);
    await page.getByText("Show the data (per minute)").waitFor();
    await page.context().close();
  });

  it("during a rollout shows the two arms side by side with the ok rate's difference and its interval, and the fleet", async () => {
    const saved = await rest(server, "PUT", "/api/v2/prompts/support", server.key, {
      name: "Support",
      sections: [{ title: "Role", content: "You help customers, briefly." }],
    });
    expect(saved.status).toBe(200);
    v2 = saved.body.data.version;
    const started = await rest(server, "POST", "/api/v2/prompts/support/publish", server.key, {
      version: v2,
      label: "production",
      percent: 50,
    });
    expect(started.status).toBe(200);
    const at = new Date().toISOString();
    const arm = (version: string, name: "current" | "candidate", n: number, ok: number) =>
      Array.from({ length: n }, (_, i) => ({
        prompt: "support",
        version,
        label: "production",
        arm: name,
        ok: i < ok,
        latency_ms: 300,
        at,
      }));
    // current: 200 outcomes, 190 ok (95%); candidate: 200 outcomes, 170 ok (85%).
    await report([...arm(v1, "current", 200, 190), ...arm(v2, "candidate", 200, 170)], {
      id: "instance-a",
      version: v1,
    });
    await report([], { id: "instance-b", version: v2 });
    await report([], { id: "instance-c", version: v2 });
    await expect
      .poll(
        async () => (await rest(server, "GET", "/api/v2/prompts/support/outcomes?by=arm")).body.data?.series?.length,
      )
      .toBe(3);
    await expect
      .poll(async () => (await rest(server, "GET", "/api/v2/prompts/support/fleet")).body.data?.instances)
      .toBe(3);
    const [expected] = evaluateGuardrails(
      [
        {
          current: { count: 200, ok: 190, score_count: 0, score_sum: 0 },
          candidate: { count: 200, ok: 170, score_count: 0, score_sum: 0 },
        },
      ],
      { ok_rate_drop: 0.05 },
    );

    const page = await open(`${base}/support/production`);
    const rollout = page.getByRole("region", { name: "Rollout", exact: true });
    await rollout.getByRole("table").waitFor();
    const rows = rollout.locator("tbody tr");
    expect(await rows.nth(0).locator("th, td").allTextContents()).toEqual([
      `Current ${v1.slice(0, 7)}`,
      "200",
      "95.0%",
      "—",
      expect.stringMatching(/ ms$/),
      expect.stringMatching(/ ms$/),
      "0",
    ]);
    expect(await rows.nth(1).locator("th, td").allTextContents()).toEqual([
      `Candidate ${v2.slice(0, 7)}`,
      "200",
      "85.0%",
      "—",
      expect.stringMatching(/ ms$/),
      expect.stringMatching(/ ms$/),
      "0",
    ]);
    expect(expected!.estimate).toBeCloseTo(-0.1, 12);
    expect(await rollout.locator(".production-difference").textContent()).toBe(
      `Ok rate, candidate − current: −10.0 pts, always-valid 95% interval ${points(expected!.interval![0])} to ${points(expected!.interval![1]!)}`,
    );
    const fleet = page.getByRole("region", { name: "Fleet" });
    await fleet.getByText("3 instances heard from in the last 5 minutes").waitFor();
    // "just now" below 10 s; a slow machine may take longer between the report and the screen
    expect(await fleet.locator("li").textContent()).toMatch(
      new RegExp(
        `^production 2 instances serve ${v2.slice(0, 7)}, 1 instance still serves ${v1.slice(0, 7)} \\(last seen (just now|\\d+ s ago)\\)$`,
      ),
    );
    await expectAccessible(page, "production-rollout");
    await screenshot(page, "production-03-rollout");
    await page.context().close();
  });

  for (const [name, options] of [
    ["dark", { scheme: "dark" }],
    ["phone", { phone: true }],
    ["phone-dark", { phone: true, scheme: "dark" }],
  ] as const) {
    it(`reads in ${name}`, async () => {
      const page = await open(`${base}/support/production`, options);
      await page.getByRole("region", { name: "Rollout", exact: true }).getByRole("table").waitFor();
      await page
        .getByRole("img", { name: /^Traffic over time\./ })
        .locator("svg.recharts-surface")
        .first()
        .waitFor();
      await expect.poll(() => page.locator(".recharts-line").count()).toBe(2);
      await expectAccessible(page, `production-${name}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(page, `production-04-${name}`);
      await page.context().close();
    });
  }

  it("shows an error when the numbers cannot be read", async () => {
    const page = await open(`${base}/support/production`);
    await page.route("**/outcomes?**", (route) =>
      route.fulfill({
        status: 500,
        contentType: "application/json",
        body: JSON.stringify({ error: { message: "boom" } }),
      }),
    );
    await page.reload();
    await page.getByRole("heading", { name: "Could not load the production numbers" }).waitFor();
    await screenshot(page, "production-05-error");
    await page.context().close();
  });

  it("logged no browser error on the way", () => {
    expect(problems.filter((p) => !/status of (401|403|404|409|429|500)/.test(p))).toEqual([]);
  });
});
