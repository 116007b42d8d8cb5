#!/usr/bin/env node
/**
 * The SDK's read from memory: ns per `await client.get(id)` once the prompt is held, in mode `watch` (the
 * stream live) and mode `ttl`. Prints one JSON line.
 *
 *   npm run build -w packages/client && node packages/client/bench/read.js
 *
 * Against a running server: PROMPTSTORE_URL and PROMPTSTORE_API_KEY (the prompt `client-bench` is created there
 * if missing). Otherwise the real server (packages/server/bin/promptstore.js) is started on a throw-away
 * SQLite file and stopped at the end. BENCH_CALLS sets the measured calls (default 1 000 000).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Promptstore } from "../dist/index.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 1_000_000);
const WARMUP = Math.min(200_000, CALLS);
const PROMPT = "client-bench";

export async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-client-bench-"));
  const bin = fileURLToPath(new URL("../../server/bin/promptstore.js", import.meta.url));
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--json"], {
    env: {
      ...process.env,
      DATABASE_URL: join(dir, "bench.sqlite"),
      LOG_LEVEL: "warn",
      PROMPTSTORE_DEFAULT_PLAN: "unlimited",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let key;
  const url = await new Promise((resolve, reject) => {
    let buffer = "";
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}`)));
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      for (const line of buffer.split("\n")) {
        if (!line.startsWith('{"event"')) continue;
        const event = JSON.parse(line);
        if (event.event === "bootstrap") key = event.key.key;
        if (event.event === "listening") resolve(event.url);
      }
    });
  });
  return {
    url,
    key,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** ns per call of `await client.get(PROMPT)`, after a warm-up. */
async function measure(client) {
  for (let i = 0; i < WARMUP; i++) await client.get(PROMPT);
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await client.get(PROMPT);
  return Number(process.hrtime.bigint() - started) / CALLS;
}

/** Measures reads from memory against a running server (PROMPTSTORE_URL) or one started for the purpose. */
export async function readBench() {
  const server = process.env.PROMPTSTORE_URL
    ? { url: process.env.PROMPTSTORE_URL, key: process.env.PROMPTSTORE_API_KEY, stop: async () => {} }
    : await startServer();
  try {
    const setup = new Promptstore({ baseUrl: server.url, apiKey: server.key, mode: "none" });
    const existing = await setup.list();
    if (!existing.prompts.some((p) => p.id === PROMPT)) {
      await setup.create({
        id: PROMPT,
        name: "Client bench",
        sections: [{ title: "Role", content: "You help customers of {{ company }}." }],
        publish: true,
      });
    }

    let requests = 0;
    const counting = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const watch = new Promptstore({ baseUrl: server.url, apiKey: server.key, fetch: counting });
    await watch.get(PROMPT);
    if (!(await watch.ready(10_000))) throw new Error("the change stream did not open: is GET /api/v2/events served?");
    while (watch.status.reading > 0) await new Promise((r) => setTimeout(r, 10));
    const before = requests;
    const watchNs = await measure(watch);
    const watchRequests = requests - before;
    watch.close();

    const ttl = new Promptstore({ baseUrl: server.url, apiKey: server.key, mode: "ttl", ttlMs: 3_600_000 });
    await ttl.get(PROMPT);
    const ttlNs = await measure(ttl);
    ttl.close();

    const result = {
      bench: "client-read-memory",
      calls: CALLS,
      ns_per_call: Math.round(watchNs * 10) / 10,
      calls_per_second: Math.round(1e9 / watchNs),
      requests_during_run: watchRequests,
      ttl_ns_per_call: Math.round(ttlNs * 10) / 10,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return result;
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await readBench();
