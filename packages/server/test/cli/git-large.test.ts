import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryRateLimiter } from "../../src/ratelimit/flexible.js";
import type { RateLimiter } from "../../src/ratelimit/limiter.js";
import { cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";

const PROMPTS = 1000;
/** Every this many requests, one is refused with a 429, whatever the machine's speed. */
const REFUSE_EVERY = 200;

/**
 * A limiter standing in for the server's own that refuses every 200th request with a reset of 1 s, counting by
 * request rather than by time: a loaded machine that makes the CLI slow still meets the same 429s. It keeps
 * when each refusal was answered and when the next request came, to show the CLI waited what Retry-After said.
 */
function refusingLimiter(): RateLimiter & { requests: number; refused: number; waitsMs: number[] } {
  const inner = memoryRateLimiter();
  let count = 0;
  let refusedAt: number | undefined;
  const limiter = {
    kind: inner.kind,
    requests: 0,
    refused: 0,
    waitsMs: [] as number[],
    async consume(key: string, limit: number, windowSeconds: number) {
      count++;
      limiter.requests++;
      if (refusedAt !== undefined) {
        limiter.waitsMs.push(performance.now() - refusedAt);
        refusedAt = undefined;
      }
      // The plan's own budget is not what is tested here: a slow run could spend it and meet other 429s.
      const decision = await inner.consume(key, Number.MAX_SAFE_INTEGER, windowSeconds);
      if (count % REFUSE_EVERY !== 0) return decision;
      limiter.refused++;
      refusedAt = performance.now();
      return { allowed: false, limit, remaining: 0, resetSeconds: 1 };
    },
    peek: (key: string, limit: number, windowSeconds: number) => inner.peek(key, limit, windowSeconds),
    giveBack: (key: string, limit: number, windowSeconds: number) => inner.giveBack(key, limit, windowSeconds),
    close: () => inner.close(),
  };
  return limiter;
}

/** Every hundredth item is reported (and more often on a slow run, every 2 s), in order, ending at the total. */
function expectProgress(stderr: string, label: string): void {
  const done = stderr
    .split("\n")
    .filter((l) => l.startsWith(`${label}: `))
    .map((l) => {
      expect(l).toMatch(new RegExp(`^${label}: \\d+/${PROMPTS}$`));
      return Number(l.slice(label.length + 2).split("/")[0]);
    });
  expect(done).toEqual([...done].sort((a, b) => a - b));
  expect(done).toEqual(expect.arrayContaining(Array.from({ length: 10 }, (_, i) => (i + 1) * 100)));
  expect(done.at(-1)).toBe(PROMPTS);
}

const sqlite = DATABASES.filter((d) => d.name === "sqlite");

describe.each(sqlite)("a project of 1 000 prompts ($name)", (database) => {
  let app: ListeningApp;
  let limiter: ReturnType<typeof refusingLimiter>;
  const dir = mkdtempSync(join(tmpdir(), "promptstore-git-large-"));

  beforeAll(async () => {
    limiter = refusingLimiter();
    app = await listeningApp(database, { plan: "unlimited", rateLimiter: limiter });
    // Seeded through the service directly: a thousand HTTP creates would only slow the test down.
    for (let n = 0; n < PROMPTS; n++) {
      await app.app.prompts.create(app.caller, {
        id: `prompt-${String(n).padStart(4, "0")}`,
        name: `Prompt ${n}`,
        sections: [{ title: "Task", content: `Task number ${n} for {{ user }}.` }],
        publish: n % 2 === 0,
      });
    }
    // A counted plan from here on (the unlimited one is not counted at all).
    await app.app.tenants.setPlan(app.orgId, "pro");
  }, 120_000);

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ps = (args: string[]) => cli("", args, { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key });

  it("pull shows progress, waits out the 429s for the seconds Retry-After names, and writes every prompt", async () => {
    const res = await ps(["pull", dir]);
    expect(res.code).toBe(0);
    expectProgress(res.stderr, "pull");
    // The listing's pages and the reads: at least 1 000 requests, so at least 5 refusals.
    expect(limiter.refused).toBeGreaterThanOrEqual(PROMPTS / REFUSE_EVERY);
    const waits = res.stderr.split("\n").filter((l) => l.startsWith("rate limited"));
    expect(waits.length).toBe(limiter.refused);
    expect(new Set(waits)).toEqual(new Set(["rate limited by the server: waiting 1 s (Retry-After)"]));
    // Each refusal was waited out: the next request came no sooner than the second Retry-After named.
    expect(limiter.waitsMs).toHaveLength(limiter.refused);
    expect(Math.min(...limiter.waitsMs)).toBeGreaterThanOrEqual(990);
    expect(res.stdout.endsWith(`${PROMPTS} prompts: ${PROMPTS} written, 0 not rewritten\n`)).toBe(true);
    expect(readdirSync(dir).filter((n) => n.endsWith(".md"))).toHaveLength(PROMPTS);
  }, 120_000);

  it("status needs no request per prompt, and push of an unchanged directory sends nothing but the listing", async () => {
    const requestsBefore = limiter.requests;
    const refusedBefore = limiter.refused;
    const status = await ps(["status", dir, "--json"]);
    expect(status.code).toBe(0);
    const rows = JSON.parse(status.stdout).prompts;
    expect(rows).toHaveLength(PROMPTS);
    expect(rows.every((r: { state: string }) => r.state === "unchanged")).toBe(true);
    const push = await ps(["push", dir]);
    expect(push.code).toBe(0);
    expect(push.stdout.endsWith(`0 created, 0 saved, ${PROMPTS} unchanged, 0 published\n`)).toBe(true);
    expectProgress(push.stderr, "push");
    // Each command read the listing (1 000 prompts, 100 a page) and nothing else.
    expect(limiter.requests - requestsBefore).toBe(2 * (PROMPTS / 100));
    // Pull's refusals (its reads, and since saved examples each prompt's examples) and none more.
    expect(limiter.refused).toBe(refusedBefore);
  }, 120_000);
});
