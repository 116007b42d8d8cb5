import { describe, expect, it } from "vitest";
import { startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";

describe.each(DATABASES)("promptstore serve, the real binary over real HTTP ($name)", (database: TestDatabase) => {
  const env = useBinaryDatabase(database);

  it("bootstraps an empty database once, then serves create, read, save, publish and rollback", async () => {
    env.server = await startServer(env.url);
    const bootstrap = env.server!.events.find((e) => e.event === "bootstrap");
    expect(bootstrap?.organization).toMatchObject({ name: "default", plan: "free" });
    const key: string = bootstrap?.key.key;
    expect(key).toMatch(/^ps_/);

    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${env.server!.url}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    };

    const created = await call("POST", "/api/v2/prompts", {
      name: "Support Bot",
      markdown: "# Role\nHelp {{ user }}.",
    });
    expect(created.status).toBe(201);
    const v1 = created.body.data.version;
    const v2 = (await call("PUT", "/api/v2/prompts/support-bot", { markdown: "# Role\nHelp {{ user }} kindly." })).body
      .data.version;
    expect((await call("POST", "/api/v2/prompts/support-bot/publish", { version: v2 })).body.data.version).toBe(v2);
    expect((await call("POST", "/api/v2/prompts/support-bot/publish", { version: v1.slice(0, 7) })).status).toBe(200);
    const read = await call("GET", "/api/v2/prompts/support-bot");
    expect(read.body.data).toMatchObject({ version: v1, label: "production", variables: ["user"] });
    expect(read.headers.get("x-api-version")).toBe("2");

    // A restart on the same database keeps everything and does not bootstrap again.
    expect(await env.server!.stop()).toBe(0);
    env.server = await startServer(env.url);
    expect(env.server!.events.some((e) => e.event === "bootstrap")).toBe(false);
    expect((await call("GET", "/api/v2/prompts/support-bot")).body.data.version).toBe(v1);
  });

  it("warns at start when passwords are hashed at the test cost, and not at the standard cost", async () => {
    // Read once the server has ended: pino writes asynchronously, so a line logged before the listening line
    // may be read after it.
    const warnedUntilStopped = async (server: NonNullable<typeof env.server>) => {
      expect(await server.stop()).toBe(0);
      return server.logs.filter((l) => l.level === 40).map((l) => l.msg);
    };
    const TEST_COST =
      "PROMPTSTORE_PASSWORD_HASH_COST=test: new passwords are hashed at a cost for test suites, not production";
    env.server = await startServer(env.url, { PROMPTSTORE_PASSWORD_HASH_COST: "test" });
    expect(await warnedUntilStopped(env.server)).toContain(TEST_COST);
    env.server = await startServer(env.url, { PROMPTSTORE_PASSWORD_HASH_COST: "standard" });
    expect(await warnedUntilStopped(env.server)).not.toContain(TEST_COST);
  });

  it("exits cleanly on SIGTERM", async () => {
    env.server = await startServer(env.url);
    expect(await env.server!.stop("SIGTERM")).toBe(0);
  });
});
