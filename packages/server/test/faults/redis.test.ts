/**
 * README (operations): with REDIS_URL the rate limits are shared through Redis; when Redis stops, requests
 * go on (each instance counts for itself meanwhile), and when it is back the counts are shared again. A
 * real Redis of the test's own, really stopped and started, under the real server binary.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { freePort } from "../support/private-postgres.js";

const run = promisify(execFile);
const REDIS = "/usr/bin/redis-server";

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  for (let i = 0; i < 100; i++) {
    if ((await run("redis-cli", ["-p", String(port), "ping"]).catch(() => ({ stdout: "" }))).stdout.trim() === "PONG") {
      return child;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("redis did not start");
}

async function stopRedis(child: ChildProcess): Promise<void> {
  const closed = new Promise((resolve) => child.once("close", resolve));
  child.kill("SIGTERM");
  await closed;
}

/** The rate-limit keys Redis holds now. */
async function keysIn(port: number): Promise<string[]> {
  const { stdout } = await run("redis-cli", ["-p", String(port), "--scan"]);
  return stdout.split("\n").filter(Boolean);
}

describe.skipIf(!existsSync(REDIS))("faults: Redis stops and starts again (sqlite)", () => {
  let redis: ChildProcess | undefined;
  let server: RunningServer | undefined;
  let redisPort = 0;
  let drop = async () => {};
  beforeEach(async () => {
    const created = await (DATABASES[0] as (typeof DATABASES)[number]).create();
    drop = created.drop;
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    server = await startServer(created.url, { REDIS_URL: `redis://127.0.0.1:${redisPort}` });
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    if (redis && redis.exitCode === null) await stopRedis(redis);
    await drop();
  });

  it("requests go on while it is away, counted in-process, and are counted in Redis again once it is back", async () => {
    const running = server as RunningServer;
    const key = running.events.find((e) => e.event === "bootstrap")?.key.key;
    const read = async () => {
      const started = Date.now();
      const res = await fetch(`${running.url}/api/v2/prompts`, { headers: { "x-api-key": key } });
      return {
        status: res.status,
        remaining: Number(res.headers.get("x-ratelimit-remaining")),
        ms: Date.now() - started,
      };
    };
    // The free plan's 60 a minute, counted in Redis.
    expect((await read()).remaining).toBe(59);
    expect((await keysIn(redisPort)).length).toBeGreaterThan(0);

    await stopRedis(redis as ChildProcess);
    const away = [];
    for (let i = 0; i < 10; i++) away.push(await read());
    expect(away.map((r) => r.status)).toEqual(Array(10).fill(200));
    // Counted by the in-process stand-in meanwhile: the limit still holds (a fresh window of its own).
    expect(away.map((r) => r.remaining)).toEqual([59, 58, 57, 56, 55, 54, 53, 52, 51, 50]);
    // No request waits long for a Redis that is not there (the command timeout is 1 s).
    expect(Math.max(...away.map((r) => r.ms))).toBeLessThan(2_000);

    redis = await startRedis(redisPort);
    // ioredis reconnects by itself; once it has, counts land in the new (empty) Redis again.
    const deadline = Date.now() + 10_000;
    let keys: string[] = [];
    while (keys.length === 0 && Date.now() < deadline) {
      expect((await read()).status).toBe(200);
      keys = await keysIn(redisPort);
      if (keys.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(keys.length).toBeGreaterThan(0);
    expect(running.process.exitCode).toBe(null);
  });
});
