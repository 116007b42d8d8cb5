#!/usr/bin/env node
/**
 * Publish-to-client propagation: N SDK clients in mode `watch`, in child processes, hold a prompt; a new
 * version of it is published again and again, and each client's `onChange` time is taken against the moment
 * the publish response arrived. On SQLite (one server) and on PostgreSQL (two servers on one database, the
 * clients split across them, every publish made on the first). Prints one JSON line per run and returns the
 * rows to bench/run.js.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../../server/bench/lib/processes.js";
import { seed } from "../../server/bench/lib/seed.js";
import { startWorkerProcess } from "./lib/worker-process.js";

const PUBLISHES = Number(process.env.BENCH_PROPAGATION_PUBLISHES ?? 10);
/** Processes the clients are spread over: 1000 applications do not share one event loop. */
const PROCESSES = Number(process.env.BENCH_PROPAGATION_PROCESSES ?? 4);
const SEEN_TIMEOUT_MS = 15_000;
/**
 * Every client connects from 127.0.0.1, as they would through one load balancer: the per-address connection
 * cap (256 by default without a trusted proxy) would turn most of 1 000 away.
 */
const SERVER_ENV = { PROMPTSTORE_MAX_CONNECTIONS_PER_IP: "0" };
const WORKER = fileURLToPath(new URL("./propagation-worker.js", import.meta.url));

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const now = () => performance.timeOrigin + performance.now();

/** A child process holding `count` clients; `ask` sends a message and resolves with the answer of `type`. */
function startWorker(config) {
  return startWorkerProcess(WORKER, { PROPAGATION_WORKER: JSON.stringify(config) }, "client", 60_000);
}

/**
 * Runs one scenario: `clients` SDK clients in `processes` child processes, spread over `servers`; every
 * publish is of a version no client has read yet (the clients must read it from the service).
 */
async function propagate(
  label,
  servers,
  seeded,
  clients,
  processes = Math.min(clients, PROCESSES),
  ref = "production",
) {
  const [first] = servers;
  // Production is the contract's publish; another label is moved with the same endpoint (docs/releases.md).
  const publish = async (version) => {
    const res = await fetch(`${first.url}/api/v2/prompts/${seeded.promptId}/publish`, {
      method: "POST",
      headers: { "x-api-key": seeded.key, "content-type": "application/json" },
      body: JSON.stringify(ref === "production" ? { version } : { version, label: ref }),
    });
    if (res.status !== 200) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
    return now();
  };
  const versions = await fetch(`${first.url}/api/v2/prompts/${seeded.promptId}/versions`, {
    headers: { "x-api-key": seeded.key },
  }).then(async (r) => (await r.json()).data.versions.map((v) => v.version));
  if (versions.length < PUBLISHES + 1) throw new Error(`the prompt needs ${PUBLISHES + 1} versions`);

  const urls = servers.map((s) => s.url);
  const workers = [];
  for (let p = 0, offset = 0; p < processes; p++) {
    const count = Math.floor(clients / processes) + (p < clients % processes ? 1 : 0);
    workers.push(startWorker({ urls, key: seeded.key, promptId: seeded.promptId, count, offset, ref }));
    offset += count;
  }
  try {
    await Promise.all(workers.map((w) => w.started));
    // Start from a known production version, held by every client with its stream live.
    await publish(versions[0]);
    const held = await Promise.all(workers.map((w) => w.ask({ type: "hold", version: versions[0] }, "held")));
    const down = held.reduce((n, h) => n + h.down, 0);
    if (down > 0) throw new Error(`${down} clients have no live stream`);

    const latencies = [];
    const eventLatencies = [];
    let stale = 0;
    for (let n = 1; n <= PUBLISHES; n++) {
      const target = versions[n];
      await Promise.all(workers.map((w) => w.ask({ type: "arm", version: target }, "armed")));
      const everyone = Promise.all(workers.map((w) => w.answer("seen", SEEN_TIMEOUT_MS)));
      const answered = await publish(target);
      for (const { seen, heard } of await everyone) {
        for (const at of seen) latencies.push(Math.max(0, at - answered));
        for (const at of heard) eventLatencies.push(Math.max(0, at - answered));
      }
      // Served from memory now, and the version just published.
      for (const { stale: s } of await Promise.all(workers.map((w) => w.ask({ type: "check" }, "checked")))) stale += s;
      await new Promise((r) => setTimeout(r, 100));
    }
    latencies.sort((a, b) => a - b);
    eventLatencies.sort((a, b) => a - b);
    const row = {
      label,
      clients,
      processes,
      instances: servers.length,
      publishes: PUBLISHES,
      p50: Number(percentile(latencies, 50).toFixed(1)),
      p99: Number(percentile(latencies, 99).toFixed(1)),
      max: Number(latencies[latencies.length - 1].toFixed(1)),
      stale,
      eventP50: Number(percentile(eventLatencies, 50).toFixed(1)),
      eventP99: Number(percentile(eventLatencies, 99).toFixed(1)),
    };
    console.log(JSON.stringify({ bench: "propagation", ...row }));
    return row;
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
}

const counts = (value) => value.split(",").filter(Boolean).map(Number);
const CLIENT_COUNTS = counts(process.env.BENCH_PROPAGATION_CLIENTS ?? "1,100,1000");
/** Watching clients that hold a label's read (`staging`) while the label moves: issue 19's row. */
const LABEL_CLIENTS = counts(process.env.BENCH_PROPAGATION_LABEL_CLIENTS ?? "1000");
/** Also run with every client in the bench's one process, the harshest case for the clients' side. */
const ONE_PROCESS = (process.env.BENCH_PROPAGATION_ONE_PROCESS ?? "1000").split(",").map(Number);

async function scenarios(label, servers, seeded) {
  const rows = [];
  for (const clients of LABEL_CLIENTS) {
    rows.push(await propagate(`${label}, label move (staging)`, servers, seeded, clients, undefined, "staging"));
  }
  for (const clients of CLIENT_COUNTS) {
    rows.push(await propagate(label, servers, seeded, clients));
    if (ONE_PROCESS.includes(clients) && Math.min(clients, PROCESSES) > 1)
      rows.push(await propagate(label, servers, seeded, clients, 1));
  }
  return rows;
}

export async function sqlitePropagation() {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-propagation-"));
  const url = join(dir, "propagation.sqlite");
  try {
    const seeded = await seed(url, { prompts: 1, versions: PUBLISHES + 1 });
    const server = await startServer(url, SERVER_ENV);
    try {
      return await scenarios("SQLite, one instance", [server], seeded);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `databaseUrl`: a fresh PostgreSQL database of the caller's. */
export async function postgresPropagation(databaseUrl) {
  const seeded = await seed(databaseUrl, { prompts: 1, versions: PUBLISHES + 1 });
  const servers = [await startServer(databaseUrl, SERVER_ENV), await startServer(databaseUrl, SERVER_ENV)];
  try {
    return await scenarios("PostgreSQL, two instances", servers, seeded);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await sqlitePropagation();
  if (process.env.BENCH_DATABASE_URL) await postgresPropagation(process.env.BENCH_DATABASE_URL);
}
