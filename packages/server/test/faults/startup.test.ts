/**
 * README (operations): `serve` waits up to PROMPTSTORE_DATABASE_WAIT_SECONDS for a database it cannot reach
 * at start-up, then exits 1 with the reason; a database that answers but refuses is no reason to wait.
 */
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, cli, type RunningServer, secretKeyEnv, startServer } from "../support/binary.js";
import { freePort, POSTGRES_BIN, type PrivatePostgres, startPrivatePostgres } from "../support/private-postgres.js";
import { keepServerLog } from "../support/server-logs.js";

/** Runs `serve` to its end: its exit code, output, and how long it took. */
function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
    env: { ...process.env, LOG_LEVEL: "warn", ...secretKeyEnv(env.DATABASE_URL), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) =>
    child.once("close", (code) => {
      keepServerLog(`serve on ${env.DATABASE_URL}, exit ${code}`, output);
      resolve({ code, output, ms: Date.now() - started });
    }),
  );
}

describe.skipIf(!POSTGRES_BIN)("faults: PostgreSQL unreachable at start-up (postgres)", () => {
  let postgres: PrivatePostgres;
  let server: RunningServer | undefined;
  beforeEach(async () => {
    postgres = await startPrivatePostgres();
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    await postgres.remove();
  });

  it("with no wait, exits 1 at once with one line naming the database and the reason, no stack trace", async () => {
    await postgres.stop();
    const run = await serveUntilExit({ DATABASE_URL: postgres.url, PROMPTSTORE_DATABASE_WAIT_SECONDS: "0" });
    expect(run.code).toBe(1);
    expect(run.output).toBe(`error: database unreachable: connect ECONNREFUSED 127.0.0.1:${postgres.port}\n`);
  });

  it("waits for a database that comes up, then serves", async () => {
    await postgres.stop();
    const starting = startServer(postgres.url, { PROMPTSTORE_DATABASE_WAIT_SECONDS: "30" });
    // Long enough for the binary to load and try at least once even on a loaded machine (loading took over
    // 2 s while the whole suite ran beside it); it then retries with backoff until the database is up.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await postgres.start();
    server = await starting;
    expect(server.events[0]).toEqual({
      event: "waiting_for_database",
      reason: `connect ECONNREFUSED 127.0.0.1:${postgres.port}`,
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("gives up after the wait, saying how long it waited", async () => {
    await postgres.stop();
    const run = await serveUntilExit({ DATABASE_URL: postgres.url, PROMPTSTORE_DATABASE_WAIT_SECONDS: "2" });
    expect(run.code).toBe(1);
    expect(run.output.trim().split("\n")).toEqual([
      `Waiting up to 2 s for the database: connect ECONNREFUSED 127.0.0.1:${postgres.port}`,
      `error: database unreachable (waited 2 s): connect ECONNREFUSED 127.0.0.1:${postgres.port}`,
    ]);
    expect(run.ms).toBeGreaterThanOrEqual(2_000);
  });

  it("does not wait for a database that answers but refuses: no such database", async () => {
    const url = postgres.url.replace(/\/postgres$/, "/missing");
    const run = await serveUntilExit({ DATABASE_URL: url, PROMPTSTORE_DATABASE_WAIT_SECONDS: "30" });
    expect(run.code).toBe(1);
    expect(run.output).toBe('error: cannot open the database: database "missing" does not exist\n');
    expect(run.ms).toBeLessThan(10_000);
  });

  it("a command other than serve fails at once with one line", async () => {
    const port = await freePort();
    const res = await cli(`postgres://postgres@127.0.0.1:${port}/postgres`, ["org", "create", "x"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(`error: database unavailable: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });
});
