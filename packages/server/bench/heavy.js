// npm run bench, "Heavy work": a plain prompt read measured before and during each heavy job, one job at a
// time, on a store of BENCH_HEAVY_PROMPTS (100 000) prompts of ~10 KB, on SQLite and PostgreSQL; the event
// loop's delay from the server's own /metrics histogram; peak RSS of the server and of each CLI job (all run
// with the binary's heap flags). A job that fails, or does not see every prompt, fails the bench loudly.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { contentHash } from "@promptstore/core/hash";
import pg from "pg";
import { seedLarge, tenKbSections } from "./lib/heavy-seed.js";
import { peakRssMb, startServer } from "./lib/processes.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/promptstore.js", import.meta.url));
const PROMPTS = Number(process.env.BENCH_HEAVY_PROMPTS ?? 100_000);
const LIST_CLIENTS = 4;
/** Jobs left out of a run (comma-separated names: list, export, backup, import, restore), said in the table. */
const SKIP = new Set(process.env.BENCH_HEAVY_SKIP?.split(",") ?? []);
const IMPORT_PROMPTS = 1000;
const START = "<!-- heavy:start -->";
const END = "<!-- heavy:end -->";
const dir = mkdtempSync(join(tmpdir(), "promptstore-heavy-"));
const failures = [];

/** GET over a connection from `address` (127.0.0.x), so each client has its own per-address cap. */
function get(url, headers, agent) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request(url, { headers, agent }, (res) => {
      const parts = [];
      res.on("data", (p) => parts.push(p));
      res.on("end", () =>
        resolve({ status: res.statusCode, body: Buffer.concat(parts), ms: performance.now() - started }),
      );
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

const agentFrom = (address) => new Agent({ keepAlive: true, maxSockets: 1, localAddress: address });
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;

/** Reads one prompt, one request at a time with a 5 ms pause, until `stop()`; then p50/p99 in ms. */
function probe(server, seeded) {
  const agent = agentFrom("127.0.0.2");
  const times = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const res = await get(`${server.url}/api/v2/prompts/${seeded.promptId}`, { "x-api-key": seeded.key }, agent);
      if (res.status !== 200) throw new Error(`probe read answered ${res.status}`);
      times.push(res.ms);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  // A failed read (the server gone) is reported when the probe stops, as the job's failure.
  done.catch(() => {});
  return async () => {
    running = false;
    try {
      await done;
    } catch (error) {
      throw new Error(
        `the probe's read failed: ${error.message}${server.exited() ? `; the server exited: ${server.stderr().slice(-1500)}` : ""}`,
      );
    }
    agent.destroy();
    const sorted = times.sort((a, b) => a - b);
    return { p50: pct(sorted, 50), p99: pct(sorted, 99), n: sorted.length };
  };
}

/** The event-loop delay histogram's counts per bucket, from /metrics. */
async function loopBuckets(server) {
  const text = (await get(`${server.url}/metrics`, {}, undefined)).body.toString();
  const counts = new Map();
  for (const m of text.matchAll(/^promptstore_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) {
    counts.set(m[1], Number(m[2]));
  }
  return counts;
}

/** The bucket bound below which 99% of the samples between two scrapes fall (ms), and the worst bucket. */
function loopP99(before, after) {
  const bounds = [...after.keys()];
  const total = (after.get("+Inf") ?? 0) - (before.get("+Inf") ?? 0);
  let p99;
  let max;
  for (const le of bounds) {
    const n = (after.get(le) ?? 0) - (before.get(le) ?? 0);
    if (p99 === undefined && n >= total * 0.99) p99 = le;
    if (max === undefined && n >= total) max = le;
  }
  const ms = (le) => (le === "+Inf" ? "> 2 500" : `≤ ${Number(le) * 1000}`);
  return { p99: ms(p99), max: ms(max), samples: total };
}

/** Runs the CLI with the binary's flags; resolves with its JSON output and peak RSS, or fails the bench. */
function cli(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, [...args, "--json"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let rss = 0;
    const poll = setInterval(() => {
      try {
        rss = Math.max(rss, peakRssMb(child.pid));
      } catch {}
    }, 100);
    child.stdout.on("data", (c) => {
      out += c;
    });
    child.stderr.on("data", (c) => {
      err += c;
    });
    child.on("exit", (code, signal) => {
      clearInterval(poll);
      if (code !== 0) reject(new Error(`promptstore ${args[0]} exited ${code ?? signal}: ${err.slice(-2000)}`));
      else resolve({ output: JSON.parse(out), rssMb: rss });
    });
  });
}

/** A bundle of `count` new prompts of ~10 KB, each with one version whose hash is its content's. */
function writeBundle(file, project, count) {
  const prompts = [];
  for (let i = 0; i < count; i++) {
    const sections = tenKbSections(1_000_000 + i).map((s) => ({ ...s, enabled: true }));
    const version = contentHash({ sections, tools: [] });
    prompts.push({
      id: `imported-${i}`,
      name: `Imported ${i}`,
      description: "",
      created_at: new Date().toISOString(),
      production_version: version,
      latest_version: version,
      versions: [
        { version, message: null, created_at: new Date().toISOString(), saved_by: "bench", sections, tools: [] },
      ],
    });
  }
  const bundle = {
    format: "promptstore-bundle",
    format_version: 1,
    exported_at: new Date().toISOString(),
    project,
    prompts,
  };
  writeFileSync(file, `${JSON.stringify(bundle, null, 2)}\n`);
}

async function suite(label, databaseUrl, freshUrl) {
  console.log(`${label}: seeding ${PROMPTS} prompts…`);
  const t0 = Date.now();
  // BENCH_HEAVY_SEEDED names a SQLite store seeded before (with its <file>.json), to measure it again.
  const seeded =
    process.env.BENCH_HEAVY_SEEDED && label === "sqlite"
      ? JSON.parse(readFileSync(`${databaseUrl}.json`, "utf8"))
      : await seedLarge(databaseUrl, PROMPTS, (n) => console.log(`  ${n}`));
  console.log(`${label}: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const server = await startServer(databaseUrl, { PROMPTSTORE_METRICS: "true" });
  const headers = { "x-api-key": seeded.key };
  const rows = [];
  try {
    const measureJob = async (name, job, key) => {
      if (SKIP.has(key)) {
        rows.push({ name, skipped: true });
        return;
      }
      const idleStop = probe(server, seeded);
      await new Promise((r) => setTimeout(r, 3000));
      const idle = await idleStop();
      const before = await loopBuckets(server);
      const stop = probe(server, seeded);
      const started = Date.now();
      let detail = "";
      let jobRss;
      let failed;
      try {
        const result = await job();
        detail = result.detail;
        jobRss = result.rssMb;
      } catch (error) {
        failed = error.message;
        failures.push(`${label} ${name}: ${error.message}`);
      }
      let during = { p50: Number.NaN, p99: Number.NaN, n: 0 };
      try {
        during = await stop();
      } catch (error) {
        failed ??= error.message;
        failures.push(`${label} ${name}: ${error.message}`);
      }
      if (server.exited())
        throw new Error(`${label}: the server exited during ${name}: ${server.stderr().slice(-1500)}`);
      const loop = loopP99(before, await loopBuckets(server));
      const row = {
        name,
        idle,
        during,
        loop,
        seconds: (Date.now() - started) / 1000,
        serverRss: peakRssMb(server.pid),
        jobRss,
        detail: failed ? `FAILED: ${failed.slice(0, 200)}` : detail,
      };
      console.log(JSON.stringify(row));
      rows.push(row);
    };

    await measureJob(
      `Unpaged list, ${LIST_CLIENTS} clients at once, 2 lists each`,
      async () => {
        const lists = await Promise.all(
          Array.from({ length: LIST_CLIENTS }, async (_, i) => {
            const agent = agentFrom(`127.0.0.${3 + i}`);
            const sizes = [];
            for (let round = 0; round < 2; round++) {
              const res = await get(`${server.url}/api/v2/prompts`, headers, agent);
              if (res.status !== 200) throw new Error(`list answered ${res.status}`);
              const count = JSON.parse(res.body).data.prompts.length;
              if (count !== PROMPTS) throw new Error(`list held ${count} prompts, not ${PROMPTS}`);
              sizes.push(res.body.length);
            }
            agent.destroy();
            return sizes[0];
          }),
        );
        return { detail: `${PROMPTS} items, ${(lists[0] / 1e6).toFixed(1)} MB each` };
      },
      "list",
    );

    const exported = join(dir, `${label}-export.json`);
    await measureJob(
      "`export` of the whole store",
      async () => {
        const { output, rssMb } = await cli(["export", exported, "--url", server.url, "--key", seeded.key], {});
        if (output.prompts !== PROMPTS) throw new Error(`exported ${output.prompts} prompts, not ${PROMPTS}`);
        return { detail: `${output.prompts} prompts`, rssMb };
      },
      "export",
    );
    rmSync(exported, { force: true });

    const backup = join(dir, `${label}-backup.jsonl`);
    await measureJob(
      "`backup`",
      async () => {
        const { output, rssMb } = await cli(["backup", backup], { DATABASE_URL: databaseUrl });
        if (output.tables.prompts !== PROMPTS) throw new Error(`backed up ${output.tables.prompts} prompts`);
        return { detail: `${output.tables.version_sections} section rows`, rssMb };
      },
      "backup",
    );

    const bundle = join(dir, `${label}-bundle.json`);
    writeBundle(bundle, { id: "x", name: "bench" }, IMPORT_PROMPTS);
    await measureJob(
      `\`import\` of a ${IMPORT_PROMPTS}-prompt bundle`,
      async () => {
        const { output, rssMb } = await cli(["import", bundle, "--url", server.url, "--key", seeded.key], {});
        const created = output.prompts.filter((r) => r.created).length;
        if (created !== IMPORT_PROMPTS) throw new Error(`imported ${created} prompts`);
        return { detail: `${created} created`, rssMb };
      },
      "import",
    );

    await measureJob(
      "`restore` of that backup into an empty store (another database)",
      async () => {
        const { output, rssMb } = await cli(["restore", backup], { DATABASE_URL: await freshUrl() });
        if (output.tables.prompts !== PROMPTS) throw new Error(`restored ${output.tables.prompts} prompts`);
        return { detail: `${output.tables.prompts} prompts`, rssMb };
      },
      "restore",
    );
    rmSync(backup, { force: true });
  } finally {
    await server.stop();
  }
  return rows;
}

async function postgresDatabase(adminUrl) {
  const name = `promptstore_heavy_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const only = process.env.BENCH_HEAVY_DATABASES?.split(",") ?? ["sqlite", "postgres"];

const results = [];
const drops = [];
try {
  if (only.includes("sqlite")) {
    let n = 0;
    const fresh = async () => join(dir, `restored-${++n}.sqlite`);
    const file = process.env.BENCH_HEAVY_SEEDED ?? join(dir, "heavy.sqlite");
    results.push(["SQLite", await suite("sqlite", file, fresh)]);
    if (!process.env.BENCH_HEAVY_SEEDED) rmSync(file, { force: true });
  }
  if (only.includes("postgres")) {
    const main = await postgresDatabase(POSTGRES_URL);
    drops.push(main);
    const fresh = async () => {
      const db = await postgresDatabase(POSTGRES_URL);
      drops.push(db);
      return db.url;
    };
    results.push(["PostgreSQL", await suite("postgres", main.url, fresh)]);
  }
} finally {
  for (const d of drops) await d.drop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}

const f = (n) => (Number.isFinite(n) ? n.toFixed(1) : "–");
const table = results
  .map(
    ([db, rows]) => `### ${db}

| Heavy job | Read p50 / p99 ms, idle | Read p50 / p99 ms, during | Event-loop delay p99 / max ms, during | Job s | Server peak RSS MB | Job's peak RSS MB | |
|---|---|---|---|---|---|---|---|
${rows
  .map((r) =>
    r.skipped
      ? `| ${r.name} | not run (BENCH_HEAVY_SKIP) | | | | | | |`
      : `| ${r.name} | ${f(r.idle.p50)} / ${f(r.idle.p99)} | ${f(r.during.p50)} / ${f(r.during.p99)} (${r.during.n} reads) | ${r.loop.p99} / ${r.loop.max} | ${r.seconds.toFixed(0)} | ${f(r.serverRss)} | ${r.jobRss === undefined ? "–" : f(r.jobRss)} | ${r.detail} |`,
  )
  .join("\n")}`,
  )
  .join("\n\n");
const section = `${START}
## Heavy work

${PROMPTS} prompts of ~10 KB in one project (seeded through the store: one prompt made by the service, its rows
copied), the real binary with its heap flags (\`${readFileSync(BIN, "utf8").split("\n")[0].replace("#!/usr/bin/env -S node ", "")}\`),
metrics on. Each job runs alone. A probe reads one prompt from 127.0.0.2, one request at a time with 5 ms
between, for 3 s before the job (idle) and for the whole job (during); list clients come from 127.0.0.3 to
127.0.0.${2 + LIST_CLIENTS}, so the per-address connection cap stays on. Event-loop delay: the server's
\`promptstore_event_loop_delay_seconds\` histogram over the job (bucket bounds). Peak RSS: VmHWM. The machine:
2 CPUs shared with other engineers' builds and tests (load average ${(await import("node:os")).loadavg()[0].toFixed(1)} at the end);
figures are noisy.

${table}
${failures.length > 0 ? `\n**FAILED**: ${failures.join("; ")}\n` : ""}${END}`;
const existing = readFileSync(RESULTS, "utf8");
writeFileSync(
  RESULTS,
  existing.includes(START)
    ? existing.replace(new RegExp(`${START}[\\s\\S]*${END}`), section)
    : `${existing.trimEnd()}\n\n${section}\n`,
);
console.log(section);
if (failures.length > 0) {
  console.error(`heavy work FAILED: ${failures.join("; ")}`);
  process.exit(1);
}
