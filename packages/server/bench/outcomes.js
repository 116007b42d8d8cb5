// npm run bench (server part): production outcomes (issue 40). The real binary on SQLite, then on PostgreSQL
// when BENCH_POSTGRES_URL (or TEST_DATABASE_URL) names a server:
// 1. reads alone: an application (a process of its own) reads the published prompt 200 times a second from its
//    own loopback address;
// 2. outcomes alone: 20 000 a second in batches of 1 000 (20 batches a second, from two other addresses), so
//    the server's CPU per 1 000 outcomes is its own;
// 3. both at once: the read's p50/p99 while the outcomes pour in.
// Then the storage a prompt-version-label-arm takes per day, from the rows the run wrote and the bytes each
// table holds per row. Writes its section of bench/results.md between the outcomes markers.

import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { writeSection } from "./lib/model-bench.js";
import { postgresDatabase } from "./lib/postgres-database.js";
import { cpuSeconds, peakRssMb, resetPeakRss, startServer } from "./lib/processes.js";
import { seed } from "./lib/seed.js";

const START = "<!-- outcomes bench: start -->";
const END = "<!-- outcomes bench: end -->";
const RATE = Number(process.env.BENCH_OUTCOMES_PER_SECOND ?? 20_000);
const BATCH = 1_000;
const SECONDS = Number(process.env.BENCH_OUTCOMES_SECONDS ?? 15);
const READS_PER_SECOND = 200;
const PG_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_DATABASE_URL;
const READER = new URL("./lib/read-loop.js", import.meta.url);

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One request on a keep-alive agent bound to a loopback address (the per-address cap stays on). */
function call(agent, url, method, path, key, payload) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      `${url}${path}`,
      {
        method,
        agent,
        headers: { "x-api-key": key, ...(payload ? { "content-type": "application/json" } : {}) },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const agentAt = (localAddress, maxSockets) => new Agent({ keepAlive: true, maxSockets, localAddress });

/**
 * Reads the prompt READS_PER_SECOND times a second for `seconds`, from an application process of its own
 * (lib/read-loop.js); the latencies of the 2xx answers.
 */
function readLoad(url, key, promptId, seconds) {
  return new Promise((resolve, reject) => {
    const child = fork(READER, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child.once("message", resolve);
    child.once("error", reject);
    child.once("exit", (code) => code !== 0 && reject(new Error(`the reader exited with ${code}`)));
    child.send({ url, key, promptId, seconds, perSecond: READS_PER_SECOND, address: "127.0.0.2" });
  });
}

/** RATE outcomes a second for `seconds`, in batches of BATCH, from two addresses; what the server said. */
async function outcomeLoad(url, key, promptId, version, seconds) {
  const agents = [agentAt("127.0.0.3", 4), agentAt("127.0.0.4", 4)];
  const batchesPerSecond = RATE / BATCH;
  const interval = 1000 / batchesPerSecond;
  let accepted = 0;
  let refused = 0;
  let failed = 0;
  const batchMs = [];
  const pending = [];
  // Twenty batches made up front and sent in turn: the generator's own work stays small beside the server's.
  const payloads = Array.from({ length: batchesPerSecond }, (_, i) =>
    JSON.stringify({
      outcomes: Array.from({ length: BATCH }, (_, j) => {
        const n = i * BATCH + j;
        return {
          prompt: promptId,
          version,
          label: "production",
          ok: n % 20 !== 0,
          latency_ms: 200 + ((n * 7919) % 1800),
          score: (n % 5) / 4,
          tokens: { input: 400 + (n % 100), output: 60 + (n % 40) },
        };
      }),
    }),
  );
  const start = Date.now();
  for (let i = 0; Date.now() - start < seconds * 1000; i++) {
    pending.push(
      call(agents[i % 2], url, "POST", "/api/v2/outcomes", key, payloads[i % payloads.length]).then((r) => {
        if (r.status !== 200) {
          if (failed++ === 0) console.error(`outcomes: ${r.status} ${r.body.slice(0, 300)}`);
          return;
        }
        batchMs.push(r.ms);
        const body = JSON.parse(r.body).data;
        accepted += body.accepted;
        refused += body.refused.length;
      }),
    );
    const wait = start + (i + 1) * interval - Date.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(pending);
  for (const agent of agents) agent.destroy();
  return { accepted, refused, failed, batchMs, seconds: (Date.now() - start) / 1000 };
}

const TABLES = ["outcome_counts", "outcome_latency"];

/** A database handle for the measure: SQLite's or PostgreSQL's, with the few calls it needs. */
async function openDb(databaseUrl) {
  if (databaseUrl.startsWith("postgres")) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return {
      all: async (sql) => (await client.query(sql)).rows,
      async bytes() {
        await client.query("VACUUM ANALYZE");
        let total = 0;
        for (const t of TABLES)
          total += Number((await client.query(`SELECT pg_total_relation_size('${t}') AS b`)).rows[0].b);
        return total;
      },
      async insert(table, rows) {
        const columns = Object.keys(rows[0]);
        for (let i = 0; i < rows.length; i += 500) {
          const chunk = rows.slice(i, i + 500);
          const values = [];
          const tuples = chunk.map((row) => `(${columns.map((c) => `$${values.push(row[c])}`).join(", ")})`);
          await client.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}`, values);
        }
      },
      close: () => client.end(),
    };
  }
  const db = new Database(databaseUrl);
  return {
    all: async (sql) => db.prepare(sql).all(),
    async bytes() {
      let total = 0;
      for (const t of TABLES) {
        total += db
          .prepare(
            "SELECT sum(pgsize) AS b FROM dbstat WHERE name = ? OR name IN " +
              "(SELECT name FROM sqlite_master WHERE tbl_name = ? AND type = 'index')",
          )
          .get(t, t).b;
      }
      return total;
    },
    async insert(table, rows) {
      const columns = Object.keys(rows[0]);
      const statement = db.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      db.transaction(() => {
        for (const row of rows) statement.run(...columns.map((c) => row[c]));
      })();
    },
    close: async () => db.close(),
  };
}

/**
 * What a day of one series takes: the run's first full minute (its counts row and latency rows) copied to every
 * minute of a day under a series of its own, then to every hour (the compacted form), measured as the growth of
 * the two tables with their indexes.
 */
async function storage(databaseUrl) {
  const db = await openDb(databaseUrl);
  try {
    const [counts] = await db.all("SELECT * FROM outcome_counts WHERE span = 1 ORDER BY count DESC LIMIT 1");
    const latency = await db.all(
      `SELECT * FROM outcome_latency WHERE span = 1 AND series_id = '${counts.series_id}' AND at = '${counts.at}'`,
    );
    const day = async (seriesId, span, spans) => {
      const before = await db.bytes();
      const base = Date.parse("2020-01-01T00:00:00.000Z");
      const at = (i) => new Date(base + i * span * 60_000).toISOString();
      await db.insert(
        "outcome_counts",
        Array.from({ length: spans }, (_, i) => ({ ...counts, series_id: seriesId, span, at: at(i) })),
      );
      await db.insert(
        "outcome_latency",
        Array.from({ length: spans }, (_, i) =>
          latency.map((row) => ({ ...row, series_id: seriesId, span, at: at(i) })),
        ).flat(),
      );
      return ((await db.bytes()) - before) / 1024;
    };
    return {
      buckets: latency.length,
      dayByMinute: await day("benchdaybyminute0000000000000000", 1, 1440),
      dayByHour: await day("benchdaybyhour000000000000000000", 60, 24),
    };
  } finally {
    await db.close();
  }
}

async function benchOne(kind, databaseUrl) {
  const seeded = await seed(databaseUrl);
  // BENCH_SERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server over the run.
  const nodeFlags = process.env.BENCH_SERVER_NODE_FLAGS?.split(" ").filter(Boolean);
  const server = await startServer(databaseUrl, {}, nodeFlags?.length ? { nodeFlags } : {});
  try {
    const read = await call(
      agentAt("127.0.0.2", 1),
      server.url,
      "GET",
      `/api/v2/prompts/${seeded.promptId}`,
      seeded.key,
    );
    const version = JSON.parse(read.body).data.version;
    // Warm-up: the first batches compile the paths; the first minute row is made.
    await outcomeLoad(server.url, seeded.key, seeded.promptId, version, 2);
    await readLoad(server.url, seeded.key, seeded.promptId, 2);

    const alone = await readLoad(server.url, seeded.key, seeded.promptId, SECONDS);
    const cpu0 = cpuSeconds(server.pid);
    const ingest = await outcomeLoad(server.url, seeded.key, seeded.promptId, version, SECONDS);
    await sleep(2_000); // the last fold is written (once a second)
    const cpuPerThousand = ((cpuSeconds(server.pid) - cpu0) * 1000 * 1000) / Math.max(1, ingest.accepted);
    resetPeakRss(server.pid);
    const [both, ingestBoth] = await Promise.all([
      readLoad(server.url, seeded.key, seeded.promptId, SECONDS),
      outcomeLoad(server.url, seeded.key, seeded.promptId, version, SECONDS),
    ]);
    const rss = peakRssMb(server.pid);
    await sleep(2_000);
    await server.stop();
    const stored = await storage(databaseUrl);
    return {
      kind,
      readAlone: {
        p50: quantile(alone.latencies, 0.5),
        p99: quantile(alone.latencies, 0.99),
        n: alone.latencies.length,
      },
      readBoth: {
        p50: quantile(both.latencies, 0.5),
        p99: quantile(both.latencies, 0.99),
        n: both.latencies.length,
        failed: both.failed,
      },
      ingest: {
        rate: Math.round(ingest.accepted / ingest.seconds),
        rateBoth: Math.round(ingestBoth.accepted / ingestBoth.seconds),
        refused: ingest.refused + ingestBoth.refused,
        failed: ingest.failed + ingestBoth.failed,
        batchP99: quantile([...ingest.batchMs, ...ingestBoth.batchMs], 0.99),
      },
      cpuPerThousand,
      rss,
      ...stored,
    };
  } finally {
    await server.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-outcomes-"));
const results = [];
try {
  results.push(await benchOne("SQLite", join(dir, "bench.sqlite")));
  console.log(results.at(-1));
  if (PG_URL) {
    const database = await postgresDatabase(PG_URL, "promptstore_bench_outcomes");
    try {
      results.push(await benchOne("PostgreSQL", database.url));
      console.log(results.at(-1));
    } finally {
      await database.drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const ms = (v) => (v === undefined ? "–" : v.toFixed(1));
const lines = [
  START,
  "## Production outcomes",
  "",
  `Written by \`npm run bench\` (\`packages/server/bench/outcomes.js\`) on ${new Date().toISOString()}: ` +
    `${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end. The real binary; ${RATE} outcomes a ` +
    `second asked, in batches of ${BATCH} from two loopback addresses, for ${SECONDS} s; an application reads the ` +
    `published prompt ${READS_PER_SECOND} times a second from a third, in a process of its own as an application is. The load generator shares the machine.`,
  "",
  "| Database | Outcomes/s taken (alone, with reads) | Read p50 / p99 alone | Read p50 / p99 with outcomes | Target p99 ≤ 20 ms | Batch p99 | Server CPU per 1 000 outcomes | Peak RSS | Refused / failed batches |",
  "|---|---|---|---|---|---|---|---|---|",
  ...results.map(
    (r) =>
      `| ${r.kind} | ${r.ingest.rate}, ${r.ingest.rateBoth} | ${ms(r.readAlone.p50)} / ${ms(r.readAlone.p99)} ms | ` +
      `${ms(r.readBoth.p50)} / ${ms(r.readBoth.p99)} ms | ${r.readBoth.p99 <= 20 ? "met" : "**missed**"} | ` +
      `${ms(r.ingest.batchP99)} ms | ${r.cpuPerThousand.toFixed(1)} ms | ${r.rss.toFixed(0)} MB | ` +
      `${r.ingest.refused} / ${r.ingest.failed} |`,
  ),
  "",
  "Storage for one prompt version on one label and arm with traffic every minute (a counts row per minute and a " +
    "latency row per bucket the minute saw; latencies here spread over 200–2 000 ms):",
  "",
  "| Database | Latency buckets a minute | A day by the minute (1 440 spans) | A day compacted to hours (24 spans) |",
  "|---|---|---|---|",
  ...results.map((r) => `| ${r.kind} | ${r.buckets} | ${r.dayByMinute.toFixed(0)} KB | ${r.dayByHour.toFixed(0)} KB |`),
  END,
];
writeSection(START, END, lines.join("\n"));
