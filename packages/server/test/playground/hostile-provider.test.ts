/**
 * A provider is anything an owner points a connection at, so its answer is bounded like any input from
 * outside: in size (PROMPTSTORE_MODEL_MAX_ANSWER_BYTES), in time (PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS beside
 * the idle limit) and in the work its parsing takes. The real binary runs under its own heap limit while the
 * stand-in floods it; the server must end each run with an `error` event, stay up, keep answering /healthz and
 * keep its memory.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type Behaviour, type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents } from "../support/playground.js";

/** The resident memory of a process, in MB, as the kernel counts it. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024;
}

/** Asks /healthz every 25 ms until stopped; keeps the slowest answer and any failure. */
function watchHealth(url: string) {
  let slowest = 0;
  let failures = 0;
  let asked = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) });
        if (res.status !== 200) failures++;
        await res.arrayBuffer();
      } catch {
        failures++;
      }
      asked++;
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { slowest, failures, asked };
    },
  };
}

const TOTAL_SECONDS = 4;

describe.each(DATABASES)("playground: a hostile provider ($name)", (database) => {
  let standIn: StandIn;
  let server: RunningServer;
  let drop = async () => {};
  let key = "";
  let connection = "";

  beforeAll(async () => {
    standIn = await startStandIn();
    const created = await database.create();
    drop = created.drop;
    server = await startServer(created.url, {
      // The binary's own heap limits (bin/promptstore.js's first line), which `node bin/promptstore.js` skips.
      NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=16",
      PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true",
      PROMPTSTORE_DEFAULT_PLAN: "unlimited",
      PROMPTSTORE_MODEL_TIMEOUT_SECONDS: "2",
      PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS: String(TOTAL_SECONDS),
    });
    const bootstrap = server.events.find((e) => e.event === "bootstrap");
    key = bootstrap?.key.key;
    const added = await cli(
      created.url,
      [
        "connection",
        "add",
        bootstrap?.project.name,
        "--name",
        "Hostile",
        "--base-url",
        standIn.baseUrl,
        "--api-key-env",
        "STAND_IN_KEY",
        "--model",
        "endless",
        "--json",
      ],
      { STAND_IN_KEY: standIn.apiKey, PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" },
    );
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    connection = JSON.parse(added.stdout).id;
    const res = await fetch(`${server.url}/api/v2/prompts`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ id: "bot", name: "Bot", sections: [{ title: "Role", content: "You help." }] }),
    });
    expect(res.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await server?.stop("SIGKILL");
    await standIn?.close();
    await drop();
  });

  /**
   * Runs `model` (as `behaviour`) `parallel` times at once over real HTTP, round after round for at least
   * `minSeconds`, and returns each run's last event.
   */
  async function flood(model: string, behaviour: Behaviour, parallel: number, minSeconds = 2) {
    standIn.on(model, behaviour);
    const health = watchHealth(server.url);
    let peakRss = rssMb(server.process.pid!);
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssMb(server.process.pid!));
    }, 50);
    const started = performance.now();
    const runs: ({ event: string; data: any } | undefined)[] = [];
    try {
      do {
        const round = await Promise.all(
          Array.from({ length: parallel }, async () => {
            const res = await fetch(`${server.url}/api/v2/prompts/bot/run`, {
              method: "POST",
              headers: { "x-api-key": key, "content-type": "application/json" },
              body: JSON.stringify({ connection, model: { name: model } }),
            });
            expect(res.status).toBe(200);
            return parseEvents(await res.text()).at(-1);
          }),
        );
        runs.push(...round);
      } while (performance.now() - started < minSeconds * 1000);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    const healthz = await health.stop();
    await standIn.waitForNoConnections(5000);
    expect(server.process.exitCode).toBeNull();
    return { runs, seconds, peakRss, healthz };
  }

  function expectHealthy(result: Awaited<ReturnType<typeof flood>>) {
    expect(result.healthz.failures).toBe(0);
    expect(result.healthz.asked).toBeGreaterThanOrEqual(5);
    // A liveness bound, not a speed target (bench/results.md, "A hostile provider", has the figures, under
    // 50 ms on a quiet machine); loose enough for a loaded CI machine.
    expect(result.healthz.slowest).toBeLessThan(2000);
    // The binary's heap is capped at 128 MB: a server that kept the flood would have died before this.
    expect(result.peakRss).toBeLessThan(400);
  }

  it("an endless stream of small deltas ends as provider_answer_too_large at 1 MiB, and the server stays up", async () => {
    const result = await flood("endless", { kind: "endless", deltaBytes: 512 }, 4);
    for (const last of result.runs) {
      expect(last?.event).toBe("error");
      expect(last?.data).toEqual({
        code: "provider_answer_too_large",
        message: "provider: the answer is larger than 1048576 bytes (PROMPTSTORE_MODEL_MAX_ANSWER_BYTES)",
        status: null,
      });
    }
    expectHealthy(result);
  });

  it("60 KB deltas end at the cap too", async () => {
    const result = await flood("huge", { kind: "endless", deltaBytes: 60_000 }, 4);
    for (const last of result.runs) expect(last?.data.code).toBe("provider_answer_too_large");
    expectHealthy(result);
  });

  it("a stream with no newline at all ends when its one line outgrows the cap, parsed in linear time", async () => {
    const result = await flood("flat", { kind: "no_newlines" }, 4);
    for (const last of result.runs) {
      expect(last?.data).toEqual({
        code: "provider_answer_too_large",
        message: "provider: a line of the stream is larger than 1048576 bytes (PROMPTSTORE_MODEL_MAX_ANSWER_BYTES)",
        status: null,
      });
    }
    expectHealthy(result);
  });

  it("a slow drip of comments, each within the idle limit, ends at the total limit as provider_timeout", async () => {
    const result = await flood("drip", { kind: "drip", intervalMs: 500 }, 2);
    for (const last of result.runs) {
      expect(last?.data).toEqual({
        code: "provider_timeout",
        message: `provider: the answer did not end within ${TOTAL_SECONDS} s (PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS)`,
        status: null,
      });
    }
    // Past the idle limit (2 s), ended by the total one (4 s).
    expect(result.seconds).toBeGreaterThanOrEqual(TOTAL_SECONDS - 0.1);
    expect(result.seconds).toBeLessThan(TOTAL_SECONDS + 10);
    expectHealthy(result);
  });
});
