/**
 * The rate limiters behind the per-organization budget, each on its real backend: a window resets after
 * its length, and a shared limiter whose Redis or PostgreSQL goes away keeps answering from its in-process
 * stand-in instead of failing requests (README, "Rate limits").
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRateLimiter } from "../../src/ratelimit/across-instances.js";
import { memoryRateLimiter } from "../../src/ratelimit/flexible.js";
import type { RateLimiter } from "../../src/ratelimit/limiter.js";
import { DATABASES, freshStore } from "../support/databases.js";
import { type TcpProxy, tcpProxy } from "../support/tcp-proxy.js";

const redisUrl = process.env.TEST_REDIS_URL;
const postgres = DATABASES.find((d) => d.name === "postgres");

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The limiter of each kind the machine can run, on a fresh backend (and its proxy, to cut it). */
async function limiterOf(kind: "memory" | "redis" | "postgres"): Promise<{ limiter: RateLimiter; proxy?: TcpProxy }> {
  if (kind === "memory") return { limiter: memoryRateLimiter() };
  if (kind === "redis") {
    const target = new URL(redisUrl!);
    const proxy = await tcpProxy(target.hostname, Number(target.port || 6379));
    cleanups.push(() => proxy.close());
    const fresh = await freshStore(DATABASES[0]!);
    cleanups.push(() => fresh.close());
    const limiter = await createRateLimiter({ redisUrl: `redis://127.0.0.1:${proxy.port}`, store: fresh.store });
    cleanups.push(() => limiter.close());
    return { limiter, proxy };
  }
  const fresh = await freshStore(postgres!);
  cleanups.push(() => fresh.close());
  const target = new URL(fresh.url);
  const proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
  cleanups.push(() => proxy.close());
  const proxied = new URL(fresh.url);
  proxied.host = `127.0.0.1:${proxy.port}`;
  const limiter = await createRateLimiter({ store: fresh.store, databaseUrl: proxied.toString() });
  cleanups.push(() => limiter.close());
  return { limiter, proxy };
}

const KINDS = ["memory" as const, ...(redisUrl ? ["redis" as const] : []), ...(postgres ? ["postgres" as const] : [])];

const allowed = async (limiter: RateLimiter, key: string, n: number, limit: number, window: number) => {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) out.push((await limiter.consume(key, limit, window)).allowed);
  return out;
};

describe.each(KINDS)("rate limiter (%s)", (kind) => {
  it("refuses past the limit, then the window resets and the budget is whole again", async () => {
    const { limiter } = await limiterOf(kind);
    expect(limiter.kind).toBe(kind);
    const key = `org:window-${Date.now()}-${Math.random()}`;
    expect(await allowed(limiter, key, 3, 2, 1)).toEqual([true, true, false]);
    const refused = await limiter.consume(key, 2, 1);
    expect({ allowed: refused.allowed, remaining: refused.remaining, reset: refused.resetSeconds }).toEqual({
      allowed: false,
      remaining: 0,
      reset: 1,
    });
    await new Promise((r) => setTimeout(r, 1_100));
    const fresh = await limiter.consume(key, 2, 1);
    expect({ allowed: fresh.allowed, remaining: fresh.remaining }).toEqual({ allowed: true, remaining: 1 });
  });

  it("gives back a counted request, within its window only, never below zero", async () => {
    const { limiter } = await limiterOf(kind);
    const key = `signin-account:give-back-${Date.now()}-${Math.random()}`;
    // Nothing counted yet: giving back leaves nothing to spend twice.
    await limiter.giveBack(key, 2, 60);
    expect(await allowed(limiter, key, 3, 2, 60)).toEqual([true, true, false]);
    await limiter.giveBack(key, 2, 60);
    await limiter.giveBack(key, 2, 60);
    // Three were counted (the refused one too): two given back leave one, so one more is allowed, not two.
    expect(await allowed(limiter, key, 2, 2, 60)).toEqual([true, false]);
    const other = `signin-account:give-back-2-${Date.now()}-${Math.random()}`;
    expect(await allowed(limiter, other, 2, 2, 60)).toEqual([true, true]);
    await limiter.giveBack(other, 2, 60);
    expect(await allowed(limiter, other, 2, 2, 60)).toEqual([true, false]);
  });

  it.skipIf(kind === "memory")("keeps limiting in-process when its backend goes away", async () => {
    const { limiter, proxy } = await limiterOf(kind);
    const key = `org:fallback-${Date.now()}-${Math.random()}`;
    expect(await allowed(limiter, key, 1, 3, 60)).toEqual([true]);
    proxy!.cut();
    // No error reaches the request, and no request waits long: the stand-in counts from zero and still
    // holds the limit. (A count sent as Redis went away used to wait for a reconnection that never came.)
    const started = Date.now();
    expect(await allowed(limiter, key, 5, 3, 60)).toEqual([true, true, true, false, false]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
