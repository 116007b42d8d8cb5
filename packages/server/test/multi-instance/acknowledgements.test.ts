import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { cli, type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const postgres = DATABASES.find((d) => d.name === "postgres");
const DEADLINE_MS = 2000;

/**
 * A write on PostgreSQL answers only once every other live instance has dropped what it made stale. An
 * instance is made slow to acknowledge by stopping its process (SIGSTOP): its connections stay open, so it
 * is still live, but it takes nothing in until it is continued.
 */
describe.runIf(!!postgres)("writes wait for the other instances' acknowledgements (postgres)", () => {
  let db: { url: string; drop(): Promise<void> };
  let a: RunningServer;
  let b: RunningServer;
  const extra: RunningServer[] = [];

  beforeAll(async () => {
    db = await postgres!.create();
    a = await startServer(db.url, {
      PROMPTSTORE_INVALIDATION_TIMEOUT_MS: String(DEADLINE_MS),
      // Its warnings are counted: not the one a test cost of password hashing adds at start.
      PROMPTSTORE_PASSWORD_HASH_COST: "standard",
    });
    b = await startServer(db.url);
  });
  afterEach(() => {
    // A failed assertion must not leave an instance stopped for the next test.
    for (const server of [a, b, ...extra]) server?.process.kill("SIGCONT");
  });
  afterAll(async () => {
    for (const server of [a, b, ...extra]) await server?.stop("SIGKILL");
    await db?.drop();
  });

  const newKey = async () => {
    const name = `org-${Math.random().toString(36).slice(2)}`;
    const org = JSON.parse((await cli(db.url, ["org", "create", name, "--plan", "unlimited", "--json"])).stdout);
    const made = JSON.parse((await cli(db.url, ["project", "create", org.id, "p", "--json"])).stdout);
    return { key: made.key.key as string, keyId: made.key.id as string };
  };

  const call = async (server: RunningServer, key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  /** A prompt `bot` with two versions, v1 in production, read once on each server given (cached there). */
  const twoVersions = async (key: string, warm: RunningServer[]) => {
    const sections = (n: number) => [{ title: "Role", content: `Version ${n}` }];
    const v1 = (await call(a, key, "POST", "/api/v2/prompts", { name: "Bot", sections: sections(1), publish: true }))
      .body.data.version as string;
    const v2 = (await call(a, key, "PUT", "/api/v2/prompts/bot", { sections: sections(2) })).body.data
      .version as string;
    for (const server of warm)
      expect((await call(server, key, "GET", "/api/v2/prompts/bot")).body.data.version).toBe(v1);
    return { v1, v2 };
  };

  /** Runs `work`, and says whether it has finished yet and how long it took. */
  const track = <T>(work: Promise<T>) => {
    const started = performance.now();
    const state = { settled: false, ms: 0 };
    const done = work.then((value) => {
      state.settled = true;
      state.ms = performance.now() - started;
      return value;
    });
    return { state, done };
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("a publish waits until a stopped instance has taken it in, and that instance then serves it", async () => {
    const { key } = await newKey();
    const { v2 } = await twoVersions(key, [b]);
    b.process.kill("SIGSTOP");
    const publish = track(call(a, key, "POST", "/api/v2/prompts/bot/publish", { version: v2 }));
    await sleep(600);
    expect(publish.state.settled).toBe(false);
    b.process.kill("SIGCONT");
    const answered = await publish.done;
    expect(answered.status).toBe(200);
    expect(answered.body.data).toEqual({ id: "bot", version: v2, published: true, label: "production" });
    expect(publish.state.ms).toBeGreaterThanOrEqual(600);
    expect(publish.state.ms).toBeLessThan(DEADLINE_MS);
    expect((await call(b, key, "GET", "/api/v2/prompts/bot")).body.data.version).toBe(v2);
    expect(a.logs.filter((l) => l.level >= 40)).toEqual([]);
  });

  it("the wait is bounded: past the deadline the write answers, warns, and the instance catches up", async () => {
    const { key } = await newKey();
    const { v2 } = await twoVersions(key, [b]);
    b.process.kill("SIGSTOP");
    const publish = track(call(a, key, "POST", "/api/v2/prompts/bot/publish", { version: v2 }));
    const answered = await publish.done;
    b.process.kill("SIGCONT");
    expect(answered.status).toBe(200);
    expect(answered.body.data).toEqual({ id: "bot", version: v2, published: true, label: "production" });
    expect(publish.state.ms).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(publish.state.ms).toBeLessThan(DEADLINE_MS + 1500);
    // The log line comes on A's stdout, which this process may read after the response.
    await vi.waitFor(() => expect(a.logs.filter((l) => l.level >= 40)).toHaveLength(1), { timeout: 2000 });
    const [warning] = a.logs.filter((l) => l.level >= 40);
    expect(warning).toMatchObject({ level: 40, msg: "change channel" });
    expect(warning!.err.message).toMatch(
      new RegExp(
        `^change channel: change to prompt bot not acknowledged within ${DEADLINE_MS} ms by 1 instance\\(s\\) \\([0-9a-f]{32} pid \\d+\\); the write answers anyway`,
      ),
    );
    a.logs.length = 0;
    // Continued, B takes the notification in before anything it is asked afterwards.
    expect((await call(b, key, "GET", "/api/v2/prompts/bot")).body.data.version).toBe(v2);
  });

  it("an instance killed while a write waits for it stops holding it up, and later writes do not wait", async () => {
    const { key } = await newKey();
    const c = await startServer(db.url);
    extra.push(c);
    const { v1, v2 } = await twoVersions(key, [b, c]);
    c.process.kill("SIGSTOP");
    const publish = track(call(a, key, "POST", "/api/v2/prompts/bot/publish", { version: v2 }));
    await sleep(400);
    expect(publish.state.settled).toBe(false);
    await c.stop("SIGKILL");
    // Dead of this kill, not of anything before it: no exit code, the signal sent.
    expect({ code: c.process.exitCode, signal: c.process.signalCode }).toEqual({ code: null, signal: "SIGKILL" });
    const answered = await publish.done;
    expect(answered.body.data).toEqual({ id: "bot", version: v2, published: true, label: "production" });
    expect(publish.state.ms).toBeGreaterThanOrEqual(400);
    expect(publish.state.ms).toBeLessThan(DEADLINE_MS);
    for (const target of [v1, v2, v1]) {
      const next = track(call(a, key, "POST", "/api/v2/prompts/bot/publish", { version: target }));
      expect((await next.done).body.data.version).toBe(target);
      expect(next.state.ms).toBeLessThan(DEADLINE_MS / 2);
      expect((await call(b, key, "GET", "/api/v2/prompts/bot")).body.data.version).toBe(target);
    }
    expect(a.logs.filter((l) => l.level >= 40)).toEqual([]);
  });

  it("`key revoke` returns only once every running instance refuses the key", async () => {
    const { key, keyId } = await newKey();
    expect((await call(a, key, "GET", "/api/v2/prompts")).status).toBe(200);
    expect((await call(b, key, "GET", "/api/v2/prompts")).status).toBe(200);
    b.process.kill("SIGSTOP");
    const revoke = track(
      cli(db.url, ["key", "revoke", keyId, "--json"], { PROMPTSTORE_INVALIDATION_TIMEOUT_MS: "10000" }),
    );
    // The CLI starts slowly; wait until the revocation is committed, then give the command time to return.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await vi.waitFor(
        async () => {
          const { rows } = await client.query("select revoked_at from api_keys where id = $1", [keyId]);
          expect(rows[0]?.revoked_at ?? null, `the CLI's revocation of key ${keyId}, committed within 10 s`).toEqual(
            expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          );
        },
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      await client.end();
    }
    await sleep(500);
    expect(revoke.state.settled).toBe(false);
    b.process.kill("SIGCONT");
    const revoked = await revoke.done;
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: keyId, revoked_at: expect.any(String) });
    expect((await call(b, key, "GET", "/api/v2/prompts")).status).toBe(401);
    expect((await call(a, key, "GET", "/api/v2/prompts")).status).toBe(401);
  });
});
