import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const postgres = DATABASES.find((d) => d.name === "postgres");
const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl) console.warn("TEST_REDIS_URL is not set: the Redis variant of the multi-instance test is skipped.");

const variants = [
  { limiter: "postgres", env: {} as Record<string, string>, run: !!postgres },
  { limiter: "redis", env: redisUrl ? { REDIS_URL: redisUrl } : {}, run: !!postgres && !!redisUrl },
];

/**
 * Two real server processes on one PostgreSQL database, as behind a load balancer: caches are invalidated
 * across instances by LISTEN/NOTIFY, and the rate limit is one budget for the organization.
 */
describe.each(variants)(
  "two instances on one PostgreSQL database, rate limits in $limiter",
  ({ limiter, env, run }) => {
    let db: { url: string; drop(): Promise<void> };
    let a: RunningServer;
    let b: RunningServer;

    beforeAll(async () => {
      if (!run) return;
      db = await postgres!.create();
      a = await startServer(db.url, env);
      b = await startServer(db.url, env);
    });
    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await db?.drop();
    });

    /** A new organization (free unless told), project and key, made with the CLI as an operator would. */
    const newKey = async (plan = "free") => {
      const org = JSON.parse(
        (await cli(db.url, ["org", "create", `org-${Math.random().toString(36).slice(2)}`, "--plan", plan, "--json"]))
          .stdout,
      );
      const made = JSON.parse((await cli(db.url, ["project", "create", org.id, "p", "--json"])).stdout);
      return { key: made.key.key as string, keyId: made.key.id as string, orgId: org.id as string };
    };

    const call = async (server: RunningServer, key: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    };

    it.runIf(run)("both instances share the limiter they announce", () => {
      for (const server of [a, b]) {
        expect(server.events.find((e) => e.event === "listening")).toMatchObject({
          database: "postgres",
          rateLimit: limiter,
        });
      }
    });

    it.runIf(run)("a publish on A is served by B on the very next read, though B had it cached", async () => {
      const { key } = await newKey("unlimited");
      const sections = (n: number) => [{ title: "Role", content: `Version ${n} of {{ x }}` }];
      const v1 = (await call(a, key, "POST", "/api/v2/prompts", { name: "Bot", sections: sections(1), publish: true }))
        .body.data.version;
      const v2 = (await call(a, key, "PUT", "/api/v2/prompts/bot", { sections: sections(2) })).body.data.version;
      for (let round = 0; round < 10; round++) {
        const target = round % 2 === 0 ? v2 : v1;
        // Warm B's cache on the current production, then publish on A and read B at once.
        await call(b, key, "GET", "/api/v2/prompts/bot");
        await call(b, key, "GET", "/api/v1/prompts/bot");
        expect((await call(a, key, "POST", "/api/v2/prompts/bot/publish", { version: target })).status).toBe(200);
        expect((await call(b, key, "GET", "/api/v2/prompts/bot")).body.data.version, `round ${round}`).toBe(target);
        expect((await call(b, key, "GET", "/api/v1/prompts/bot")).body.data.version, `round ${round}`).toBe(target);
      }
      // A save on B moves latest as seen from A.
      const v3 = (await call(b, key, "PUT", "/api/v2/prompts/bot", { sections: sections(3) })).body.data.version;
      expect((await call(a, key, "GET", "/api/v2/prompts/bot?version=latest")).body.data.version).toBe(v3);
    });

    it.runIf(run)("a Free organization's 60 requests a minute are spent across both; the 61st is 429", async () => {
      const { key } = await newKey("free");
      const statuses: number[] = [];
      const remaining: number[] = [];
      for (let n = 0; n < 60; n++) {
        const res = await call(n % 2 === 0 ? a : b, key, "GET", "/api/v2/prompts");
        statuses.push(res.status);
        remaining.push(Number(res.headers.get("x-ratelimit-remaining")));
      }
      expect(statuses).toEqual(Array(60).fill(200));
      expect(remaining).toEqual(Array.from({ length: 60 }, (_, n) => 59 - n));
      for (const server of [a, b]) {
        const refused = await call(server, key, "GET", "/api/v2/prompts");
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe(refused.headers.get("x-ratelimit-reset"));
      }
    });

    it.runIf(run)("a key revoked from the CLI is refused by both running instances at once", async () => {
      const { key, keyId } = await newKey("unlimited");
      // Both instances have the key in their caches.
      expect((await call(a, key, "GET", "/api/v2/prompts")).status).toBe(200);
      expect((await call(b, key, "GET", "/api/v2/prompts")).status).toBe(200);
      const revoked = await cli(db.url, ["key", "revoke", keyId, "--json"]);
      expect(revoked.code).toBe(0);
      expect((await call(a, key, "GET", "/api/v2/prompts")).status).toBe(401);
      expect((await call(b, key, "GET", "/api/v2/prompts")).status).toBe(401);
    });

    it.runIf(run)("a plan change from the CLI reaches both instances' key caches", async () => {
      const made = await newKey("free");
      expect((await call(a, made.key, "GET", "/api/v2/prompts")).headers.get("x-ratelimit-limit")).toBe("60");
      expect((await call(b, made.key, "GET", "/api/v2/prompts")).headers.get("x-ratelimit-limit")).toBe("60");
      expect((await cli(db.url, ["org", "set-plan", made.orgId, "pro"])).code).toBe(0);
      expect((await call(a, made.key, "GET", "/api/v2/prompts")).headers.get("x-ratelimit-limit")).toBe("1000");
      expect((await call(b, made.key, "GET", "/api/v2/prompts")).headers.get("x-ratelimit-limit")).toBe("1000");
    });
  },
);
