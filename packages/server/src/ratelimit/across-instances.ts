import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis } from "rate-limiter-flexible";
import type { Store } from "../store/index.js";
import { FlexibleRateLimiter, type LimiterFactory, memoryRateLimiter } from "./flexible.js";
import type { RateLimiter } from "./limiter.js";

/** How long a rate-limit count may wait on Redis before the in-process stand-in answers instead. */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;

/** A window's options with the in-process limiter that stands in for it while the shared store fails. */
function withStandIn(window: Parameters<LimiterFactory>[0]) {
  return {
    ...window,
    insuranceLimiter: new RateLimiterMemory({ ...window, keyPrefix: `${window.keyPrefix}_insurance` }),
  };
}

/**
 * The limiter every instance of a deployment shares: Redis when REDIS_URL is set, else the PostgreSQL the
 * instances already share, else (one SQLite server) in-process. If the shared store fails, an in-process
 * limiter stands in (limits then hold per instance) rather than failing requests.
 */
export async function createRateLimiter(options: {
  redisUrl?: string | undefined;
  store: Store;
  databaseUrl?: string | undefined;
}): Promise<RateLimiter> {
  if (options.redisUrl) {
    // Loaded only here: most deployments have no Redis, and loading ioredis costs every start about 0.1 s.
    const { Redis } = await import("ioredis");
    const redis = new Redis(options.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // A command written as the connection died is kept for a retry on reconnection; with Redis gone that
      // never comes, and the request it counts would wait with it (found by test/ratelimit/limiters.test.ts,
      // over 30 s). Past this it fails, and the in-process stand-in answers.
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    });
    // Without a listener ioredis prints every connection error; the stand-in is what matters then.
    redis.on("error", () => {});
    await redis.connect();
    return new FlexibleRateLimiter(
      "redis",
      (window) => new RateLimiterRedis({ storeClient: redis, ...withStandIn(window) }),
      async () => {
        await redis.quit().catch(() => redis.disconnect());
      },
    );
  }

  // The database the instances already share, where it is shared (PostgreSQL).
  const pool = options.databaseUrl ? options.store.operations.sharedCounters(options.databaseUrl, 4) : undefined;
  if (pool) {
    return new FlexibleRateLimiter(
      "postgres",
      (window) =>
        new RateLimiterPostgres({
          storeClient: pool,
          storeType: "pool",
          tableName: "rate_limits",
          // Created by migration 002, once, instead of by every instance racing at start-up.
          tableCreated: true,
          ...withStandIn(window),
        }),
      () => pool.end(),
    );
  }

  return memoryRateLimiter();
}
