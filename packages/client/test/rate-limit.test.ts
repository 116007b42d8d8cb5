/**
 * A real 429: the free plan allows 60 requests a minute per organization (packages/core/src/accounts/plans.ts). The
 * window is a minute from its first request, so waiting one out takes up to a minute: this file runs on
 * SQLite only, beside the others.
 */
import { describe, expect, test } from "vitest";
import { PromptstoreError } from "../src/index.js";
import { countingFetch, DATABASES, SECTIONS, useFixture } from "./support/harness.js";

const FREE = { PROMPTSTORE_DEFAULT_PLAN: "free" };

describe.each(DATABASES.filter((d) => d.name === "sqlite"))("429: the free plan's rate limit ($name)", (database) => {
  const fx = useFixture(database);

  test("a 429 is waited out for Retry-After (bounded by maxRetryAfterMs) and sent again", {
    timeout: 120_000,
  }, async () => {
    const server = await fx.start(FREE);
    const writer = fx.client({ baseUrl: server.url, mode: "none", retries: 0 });
    await writer.create({ name: "Limited", sections: SECTIONS });

    // Spend the rest of the minute's budget.
    let retryAfter = 0;
    for (let i = 0; i < 100 && retryAfter === 0; i++) {
      const res = await fetch(`${server.url}/api/v2/prompts`, { headers: { "x-api-key": fx.key } });
      await res.arrayBuffer();
      if (res.status === 429) {
        expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
        retryAfter = Number(res.headers.get("retry-after"));
      }
    }
    expect(retryAfter).toBeGreaterThan(1);

    // Bounded: the wait is cut to maxRetryAfterMs, then the 429 is reported, typed.
    const bounded = countingFetch();
    const impatient = fx.client({
      baseUrl: server.url,
      mode: "none",
      retries: 1,
      maxRetryAfterMs: 500,
      fetch: bounded.fetch,
    });
    let started = performance.now();
    const error = (await impatient.get("limited").catch((e: unknown) => e)) as PromptstoreError;
    expect(performance.now() - started).toBeGreaterThanOrEqual(480);
    expect(bounded.calls).toHaveLength(2);
    expect(error).toBeInstanceOf(PromptstoreError);
    expect(error.status).toBe(429);
    expect(error.message).toMatch(/rate limit exceeded: the free plan allows 60 requests per minute/);
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(error.requestId).toEqual(expect.any(String));

    // Patient: it waits the seconds the service names, and the retry goes through.
    const patient = countingFetch();
    const client = fx.client({ baseUrl: server.url, mode: "none", retries: 1, fetch: patient.fetch });
    started = performance.now();
    const prompt = await client.get("limited");
    const waited = performance.now() - started;
    expect(prompt.id).toBe("limited");
    expect(patient.calls).toHaveLength(2);
    expect(waited).toBeGreaterThanOrEqual(((error.retryAfter ?? 1) - 2) * 1000);
  });
});
