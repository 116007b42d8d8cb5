// npm run bench: the read path against a bare node:http server, uncached reads, saves, lists, the same
// read in a large store, and the herd of clients that re-read after a publish. Prints as it goes and
// writes bench/results.md at the repository root.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HERD_CLIENTS, HERD_PUBLISHES, herdBench } from "./lib/herd.js";
import { CONNECTIONS, DURATION_S, measure, WARMUP_S } from "./lib/load.js";
import { startBareServer, startServer } from "./lib/processes.js";
import { benchSections, seed } from "./lib/seed.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const BIG_PROMPTS = Number(process.env.BENCH_BIG_PROMPTS ?? 10_000);
const tmp = mkdtempSync(join(tmpdir(), "promptstore-bench-"));
const rows = [];
const herds = [];
const notes = [];

async function withServer(databaseUrl, env, work) {
  const server = await startServer(databaseUrl, env);
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** The round with the median throughput; peak RSS is the highest any round reached. */
function median(name, runs) {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  const mid = sorted[Math.floor(sorted.length / 2)];
  return {
    ...mid,
    name,
    rssMb: Math.max(...runs.map((r) => r.rssMb ?? 0)) || undefined,
    rounds: runs.map((r) => Math.round(r.rps)),
  };
}

/**
 * The read of one prompt from a cached and an uncached server on each store, and (optionally) the bare
 * baseline, all running at once and loaded in turn, round after round: noise on this shared machine then
 * falls on all of them alike (the large store against the small one included), and each reports its
 * median round.
 */
async function readBench(stores, { bare = false } = {}) {
  const targets = [];
  for (const { label, databaseUrl, seeded } of stores) {
    const headers = { "x-api-key": seeded.key };
    const path = `/api/v2/prompts/${seeded.promptId}`;
    const cached = await startServer(databaseUrl, {});
    const uncached = await startServer(databaseUrl, { PROMPTSTORE_READ_CACHE: "false" });
    targets.push({ label, headers, path, cached, uncached, runs: { cached: [], uncached: [] } });
  }
  const first = targets[0];
  const body = Buffer.from(
    await (await fetch(first.cached.url + first.path, { headers: first.headers })).arrayBuffer(),
  );
  const baseline = bare ? await startBareServer(body) : undefined;
  const bareRuns = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const { label, headers, path, cached, uncached, runs } of targets) {
        runs.cached.push(
          await measure(`${label}: cached read, round ${round}`, { url: cached.url + path, headers, pid: cached.pid }),
        );
        if (baseline && targets[0].label === label)
          bareRuns.push(await measure(`bare node:http, round ${round}`, { url: baseline.url, pid: baseline.pid }));
        runs.uncached.push(
          await measure(`${label}: uncached read, round ${round}`, {
            url: uncached.url + path,
            headers,
            pid: uncached.pid,
          }),
        );
      }
    }
  } finally {
    await Promise.all([...targets.flatMap((t) => [t.cached.stop(), t.uncached.stop()]), baseline?.stop()]);
  }
  return {
    bytes: body.length,
    bare: baseline ? median("bare node:http server answering the same bytes", bareRuns) : undefined,
    stores: targets.map(({ label, runs }) => ({
      cached: median(`${label}: cached production read, guard on`, runs.cached),
      uncached: median(`${label}: uncached production read, guard on (PROMPTSTORE_READ_CACHE=false)`, runs.uncached),
    })),
  };
}

async function saveBench(label, databaseUrl, seeded) {
  return withServer(databaseUrl, {}, async (server) => {
    let n = 1_000_000;
    return measure(`${label}: saves of new versions (PUT)`, {
      url: server.url,
      pid: server.pid,
      requests: [
        {
          method: "PUT",
          path: `/api/v2/prompts/${seeded.promptId}`,
          headers: { "x-api-key": seeded.key, "content-type": "application/json" },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ sections: benchSections(n++) }) }),
        },
      ],
    });
  });
}

async function listBench(label, databaseUrl, seeded) {
  return withServer(databaseUrl, {}, (server) =>
    measure(`${label}: GET /api/v2/prompts, 1 000 prompts`, {
      url: `${server.url}/api/v2/prompts`,
      headers: { "x-api-key": seeded.key },
      pid: server.pid,
    }),
  );
}

/** One database's whole suite; `makeUrl(name)` gives a fresh database URL. */
async function suite(label, makeUrl, { bare, big: withBig = true }) {
  const result = {};
  const smallUrl = await makeUrl("small");
  const small = await seed(smallUrl, { prompts: 10, versions: 10 });
  const stores = [{ label: `${label}, 10 prompts`, databaseUrl: smallUrl, seeded: small }];
  if (withBig) {
    const bigUrl = await makeUrl("big");
    const started = Date.now();
    const big = await seed(bigUrl, {
      prompts: BIG_PROMPTS,
      versions: 10,
      onProgress: (n) => process.stdout.write(`  seeded ${n} prompts × 10 versions\r`),
    });
    notes.push(
      `${label}: seeding ${BIG_PROMPTS} prompts × 10 versions through the service took ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
        `the database file is ${(statSync(bigUrl).size / 2 ** 20).toFixed(0)} MB.`,
    );
    stores.push({ label: `${label}, ${BIG_PROMPTS} prompts × 10 versions`, databaseUrl: bigUrl, seeded: big });
  }
  const reads = await readBench(stores, { bare });
  result.small = { ...reads.stores[0], bare: reads.bare, bytes: reads.bytes };
  result.big = reads.stores[1];
  result.saves = await saveBench(label, smallUrl, small);

  const listUrl = await makeUrl("list");
  result.list = await listBench(label, listUrl, await seed(listUrl, { prompts: 1000 }));

  rows.push(result.small.cached, result.small.bare, result.small.uncached, result.saves, result.list);
  if (result.big) rows.push(result.big.cached, result.big.uncached);

  const herdUrl = await makeUrl("herd");
  result.herd = await herdBench(label, herdUrl, await seed(herdUrl, { prompts: 10, versions: 10 }));
  herds.push(result.herd);
  return result;
}

/**
 * Two instances on one database under one load: two autocannon runs of half the connections each, at the
 * same time, one per instance (a load balancer's round robin). Throughput is the sum; latency the worse.
 */
async function twoInstanceBench(label, databaseUrl, seeded, env) {
  const headers = { "x-api-key": seeded.key };
  const path = `/api/v2/prompts/${seeded.promptId}`;
  const servers = [await startServer(databaseUrl, env), await startServer(databaseUrl, env)];
  try {
    const runs = await Promise.all(
      servers.map((server, i) =>
        measure(`${label}: instance ${i + 1} of 2`, {
          url: server.url + path,
          headers,
          pid: server.pid,
          connections: CONNECTIONS / 2,
        }),
      ),
    );
    const row = {
      name: `${label}: two instances behind one load (${CONNECTIONS} connections split)`,
      rps: runs[0].rps + runs[1].rps,
      p50: Math.max(runs[0].p50, runs[1].p50),
      p99: Math.max(runs[0].p99, runs[1].p99),
      non2xx: runs[0].non2xx + runs[1].non2xx,
      rssMb: Math.max(runs[0].rssMb, runs[1].rssMb),
    };
    console.log(`${row.name}: ${row.rps.toFixed(0)} req/s in total`);
    return row;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

async function postgresSuite(adminUrl) {
  const pg = (await import("pg")).default;
  const created = [];
  const makeUrl = async (name) => {
    const db = `promptstore_bench_${name}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    created.push(db);
    const url = new URL(adminUrl);
    url.pathname = `/${db}`;
    return url.toString();
  };
  try {
    const result = await suite("PostgreSQL", makeUrl, { bare: false, big: false });
    const url = await makeUrl("pair");
    const seeded = await seed(url, { prompts: 10, versions: 10 });
    result.pairCached = await twoInstanceBench("PostgreSQL, cached reads", url, seeded, {});
    result.pairUncached = await twoInstanceBench("PostgreSQL, uncached reads", url, seeded, {
      PROMPTSTORE_READ_CACHE: "false",
    });
    rows.push(result.pairCached, result.pairUncached);
    return result;
  } finally {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    for (const db of created) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  }
}

const pct = (a, b) => `${((a / b) * 100).toFixed(0)}%`;
const check = (ok) => (ok ? "met" : "**missed**");

function report(sqlite) {
  const { small, big } = sqlite;
  const bare = small.bare;
  const targets = [
    ["Cached read ≥ 70% of bare req/s", `${pct(small.cached.rps, bare.rps)}`, small.cached.rps >= 0.7 * bare.rps],
    [
      "Cached read p99 ≤ 2 × bare p99",
      `${small.cached.p99} ms vs ${bare.p99} ms`,
      small.cached.p99 <= 2 * Math.max(bare.p99, 1),
    ],
    [
      "Uncached SQLite read ≥ 30% of bare req/s",
      `${pct(small.uncached.rps, bare.rps)}`,
      small.uncached.rps >= 0.3 * bare.rps,
    ],
    ...herds.map((h) => [
      `${h.label}: one database read per publish under a herd of ${h.clients} clients`,
      `${Math.max(...h.readsPerPublish)} at most (${h.readsPerPublish.join(", ")})`,
      Math.max(...h.readsPerPublish) === 1 && h.wrong === 0,
    ]),
    [
      `Uncached read latency with ${BIG_PROMPTS} prompts within 20% of 10 (p50)`,
      `${big.uncached.p50} ms vs ${small.uncached.p50} ms`,
      big.uncached.p50 <= 1.2 * Math.max(small.uncached.p50, 1),
    ],
    [
      `Uncached read throughput with ${BIG_PROMPTS} prompts within 20% of 10`,
      `${pct(big.uncached.rps, small.uncached.rps)}`,
      big.uncached.rps >= 0.8 * small.uncached.rps,
    ],
    [
      "Peak RSS of the server under the cached read load < 150 MB",
      `${small.cached.rssMb.toFixed(1)} MB`,
      small.cached.rssMb < 150,
    ],
  ];
  const table = (list) =>
    [
      "| Scenario | req/s | p50 ms | p99 ms | peak RSS MB | non-2xx |",
      "|---|---:|---:|---:|---:|---:|",
      ...list
        .filter(Boolean)
        .map(
          (r) =>
            `| ${r.name} | ${r.rps.toFixed(0)}${r.rounds ? ` (rounds: ${r.rounds.join(", ")})` : ""} | ${r.p50} | ${r.p99} | ${r.rssMb?.toFixed(1) ?? "–"} | ${r.non2xx} |`,
        ),
    ].join("\n");
  return `# Benchmark results

Written by \`npm run bench\` on ${new Date().toISOString()}: ${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}),
${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}. Each row: autocannon, ${CONNECTIONS} connections,
${WARMUP_S} s warm-up then ${DURATION_S} s measured, against a separate server process on loopback (the load
generator shares the machine's cores). Reads are measured in ${ROUNDS} interleaved rounds (cached, bare, uncached, then
the large store's cached and uncached, again and again) and report the median round; the req/s of every round is
given in brackets. The servers run with
LOG_LEVEL=warn (no access log). Peak RSS is the kernel's high-water mark (VmHWM) of the server process,
reset before the measured run. The read is a published prompt of 5 sections, ${small.bytes} bytes of response.

## Targets

| Target | Reached | |
|---|---|---|
${targets.map(([t, v, ok]) => `| ${t} | ${v} | ${check(ok)} |`).join("\n")}

Cached / bare ratio: ${(small.cached.rps / bare.rps).toFixed(2)} of the requests per second; uncached / bare:
${(small.uncached.rps / bare.rps).toFixed(2)}.

## All runs

${table(rows)}

${notes.map((n) => `- ${n}`).join("\n")}

## The herd

${HERD_CLIENTS} clients, each on its own open keep-alive connection, re-read the published prompt at the same
moment right after a publish, ${HERD_PUBLISHES} publishes in a row (alternating two versions), with the read cache
on. Database reads are counted by the server itself (\`PromptService.reads\`): the server is the app as
\`promptstore serve\` builds it, with the binary's heap flags, in a process that reports the counter to the bench
over IPC (bench/lib/counting-server.js). Latency is that of the herd's requests, from the client's side, and
includes their queueing behind one another on ${cpus().length} cores shared with the client. Every answer must be a
200 serving the version just published.

| Database | database reads per publish | p50 ms | p99 ms | wrong answers |
|---|---|---:|---:|---:|
${herds.map((h) => `| ${h.label} | ${h.readsPerPublish.join(", ")} | ${h.p50} | ${h.p99} | ${h.wrong} |`).join("\n")}
`;
}

const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function postgresReachable(url) {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

try {
  const sqlite = await suite("SQLite", async (name) => join(tmp, `${name}.sqlite`), { bare: true });
  if (await postgresReachable(POSTGRES_URL)) {
    await postgresSuite(POSTGRES_URL);
  } else {
    notes.push(
      `PostgreSQL at ${POSTGRES_URL.replace(/\/\/[^@/]*@/, "//")} was not reachable: its rows are missing from this run.`,
    );
    console.warn("PostgreSQL not reachable: skipping its runs (set BENCH_DATABASE_URL)");
  }
  // The client's and the dashboard's benches keep their own sections of the same file; they survive this rewrite.
  const previous = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "";
  const kept = ["client", "dashboard"]
    .map((name) => previous.match(new RegExp(`<!-- ${name} bench: start -->[\\s\\S]*<!-- ${name} bench: end -->`))?.[0])
    .filter(Boolean);
  const text = report(sqlite) + kept.map((section) => `\n${section}\n`).join("");
  mkdirSync(join(RESULTS, ".."), { recursive: true });
  writeFileSync(RESULTS, text);
  console.log(`\nwrote ${RESULTS}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
