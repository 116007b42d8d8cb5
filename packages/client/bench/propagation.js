#!/usr/bin/env node
/**
 * Publish-to-client propagation: N SDK clients in mode `watch` hold a prompt; the prompt is published again
 * and again (alternating two versions), and each client's `onChange` time is taken against the moment the
 * publish response arrived. On SQLite (one server) and on PostgreSQL (two servers on one database, the
 * clients split across them, every publish made on the first). Prints one JSON line per run and returns the
 * rows to bench/run.js.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../../server/bench/lib/processes.js";
import { seed } from "../../server/bench/lib/seed.js";
import { Promptstore } from "../dist/index.js";

const PUBLISHES = Number(process.env.BENCH_PROPAGATION_PUBLISHES ?? 10);
const SEEN_TIMEOUT_MS = 15_000;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Runs one scenario: `clients` SDK clients spread over `servers`, publishes made on the first server. */
async function propagate(label, servers, seeded, clients) {
  const [first] = servers;
  const publish = async (version) => {
    const res = await fetch(`${first.url}/api/v2/prompts/${seeded.promptId}/publish`, {
      method: "POST",
      headers: { "x-api-key": seeded.key, "content-type": "application/json" },
      body: JSON.stringify({ version }),
    });
    if (res.status !== 200) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
    return performance.now();
  };
  const versions = await fetch(`${first.url}/api/v2/prompts/${seeded.promptId}/versions`, {
    headers: { "x-api-key": seeded.key },
  }).then(async (r) => (await r.json()).data.versions.map((v) => v.version));
  const targets = [versions[0], versions[1]];

  let target = "";
  let seen = new Map();
  let heard = new Map();
  let allSeen = () => {};
  const sdk = Array.from({ length: clients }, (_, i) => {
    const client = new Promptstore({
      baseUrl: servers[i % servers.length].url,
      apiKey: seeded.key,
      onEvent: (event) => {
        if (event.type === "prompt.published" && event.version === target && !heard.has(i)) {
          heard.set(i, performance.now());
        }
      },
      onChange: (change) => {
        if (change.version !== target || seen.has(i)) return;
        seen.set(i, performance.now());
        if (seen.size === clients) allSeen();
      },
    });
    return client;
  });
  try {
    // Start from a known production version, held by every client with its stream live.
    target = targets[1];
    await publish(target);
    await Promise.all(sdk.map((client) => client.get(seeded.promptId)));
    const live = await Promise.all(sdk.map((client) => client.ready(30_000)));
    if (live.includes(false)) throw new Error(`${live.filter((l) => !l).length} clients have no live stream`);

    const latencies = [];
    const eventLatencies = [];
    let stale = 0;
    for (let n = 0; n < PUBLISHES; n++) {
      target = targets[n % 2];
      seen = new Map();
      heard = new Map();
      const everyone = new Promise((resolve, reject) => {
        allSeen = resolve;
        setTimeout(() => reject(new Error(`${clients - seen.size} clients did not see the publish`)), SEEN_TIMEOUT_MS);
      });
      const answered = await publish(target);
      await everyone;
      for (const at of seen.values()) latencies.push(Math.max(0, at - answered));
      for (const at of heard.values()) eventLatencies.push(Math.max(0, at - answered));
      // Served from memory now, and the version just published.
      for (const client of sdk) if ((await client.get(seeded.promptId)).version !== target) stale++;
      await new Promise((r) => setTimeout(r, 100));
    }
    latencies.sort((a, b) => a - b);
    eventLatencies.sort((a, b) => a - b);
    const row = {
      label,
      clients,
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
    for (const client of sdk) client.close();
  }
}

const CLIENT_COUNTS = (process.env.BENCH_PROPAGATION_CLIENTS ?? "1,100,1000").split(",").map(Number);

export async function sqlitePropagation() {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-propagation-"));
  const url = join(dir, "propagation.sqlite");
  try {
    const seeded = await seed(url, { prompts: 1, versions: 2 });
    const server = await startServer(url, {});
    try {
      const rows = [];
      for (const clients of CLIENT_COUNTS)
        rows.push(await propagate("SQLite, one instance", [server], seeded, clients));
      return rows;
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `databaseUrl`: a fresh PostgreSQL database of the caller's. */
export async function postgresPropagation(databaseUrl) {
  const seeded = await seed(databaseUrl, { prompts: 1, versions: 2 });
  const servers = [await startServer(databaseUrl, {}), await startServer(databaseUrl, {})];
  try {
    const rows = [];
    for (const clients of CLIENT_COUNTS) {
      rows.push(await propagate("PostgreSQL, two instances", servers, seeded, clients));
    }
    return rows;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await sqlitePropagation();
  if (process.env.BENCH_DATABASE_URL) await postgresPropagation(process.env.BENCH_DATABASE_URL);
}
