// npm run bench, "Heavy work": a plain prompt read measured before and during each heavy job, one job at a
// time, on a store of BENCH_HEAVY_PROMPTS (100 000) prompts of ~10 KB, on SQLite and PostgreSQL; the event
// loop's delay from the server's own /metrics histogram; peak RSS of the server and of each CLI job (all run
// with the binary's heap flags). A job that fails, or does not see every prompt, fails the bench loudly.
import { fork, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { matchesSearch } from "@promptstore/core/dashboard";
import { contentHash } from "@promptstore/core/prompts/hash";
import pg from "pg";
import { ownerCookie } from "../../dashboard/bench/lib/session.js";
import { seedLarge, tenKbSections } from "./lib/heavy-seed.js";
import { postgresDatabase } from "./lib/postgres-database.js";
import { BIN_NODE_FLAGS, cpuSeconds, peakRssMb, resetPeakRss, secretKeyEnv, startServer } from "./lib/processes.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/promptstore.js", import.meta.url));
const PROMPTS = Number(process.env.BENCH_HEAVY_PROMPTS ?? 100_000);
const LIST_CLIENTS = 4;
const SEARCH_CLIENTS = 4;
const CLIENTS = fileURLToPath(new URL("./lib/heavy-clients.js", import.meta.url));
/** Jobs left out of a run (comma-separated: list, search, export, backup, import, push, restore), said in the table. */
const SKIP = new Set(process.env.BENCH_HEAVY_SKIP?.split(",") ?? []);
/**
 * Node flags for the server besides the binary's (BENCH_HEAVY_SERVER_FLAGS, space-separated; e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof` to see where a job's time goes), or none: the binary as it is.
 */
const SERVER_FLAGS = process.env.BENCH_HEAVY_SERVER_FLAGS
  ? [...BIN_NODE_FLAGS, ...process.env.BENCH_HEAVY_SERVER_FLAGS.split(" ").filter(Boolean)]
  : undefined;
const IMPORT_PROMPTS = 1000;
const PUSH_PROMPTS = 1000;
const START = "<!-- heavy:start -->";
const END = "<!-- heavy:end -->";
const dir = mkdtempSync(join(tmpdir(), "promptstore-heavy-"));
const failures = [];

/**
 * The load's processes yield the cores to the server, its database and the probe (nice 19): in production the
 * clients that list, search, export, import and push run on machines of their own, and on this one their JSON
 * parsing would otherwise take the cores the server's answers need, and add to the read times the probe
 * reports. `backup` and `restore` stay at the server's priority: an operator may well run them on its host.
 */
const yieldCores = (pid) => setPriority(pid, 19);

/** A plain GET, for /metrics. */
function get(url) {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      const parts = [];
      res.on("data", (p) => parts.push(p));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts) }));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;

/**
 * Runs one of lib/heavy-clients.js's jobs in a process of its own. `started` resolves once it runs (the probe
 * says so), `result` with what it reports; `stop()` asks a probe to end.
 */
function client(job, args) {
  const child = fork(CLIENTS, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let ready;
  const started = new Promise((r) => {
    ready = r;
  });
  const result = new Promise((resolve, reject) => {
    child.on("message", (m) => {
      if (m.ready) ready();
      else if (m.done) resolve(m.done);
      else if (m.failed) reject(new Error(m.failed));
    });
    // "close", not "exit": a child's last message can arrive after its exit is seen (the PostgreSQL export's
    // probe answer was lost that way), never after its channel has closed.
    child.on("close", (code) => reject(new Error(`the ${job} client exited ${code} without an answer`)));
  });
  result.catch(() => {});
  child.send({ job, args });
  if (job !== "probe") {
    yieldCores(child.pid);
    ready();
  }
  return { started, result, stop: () => child.connected && child.send("stop") };
}

/** The probe: reads in its own process until `stop()`, then p50/p99 in ms. */
async function probe(server, seeded) {
  const reader = client("probe", { url: server.url, key: seeded.key, promptId: seeded.promptId });
  await reader.started;
  return async () => {
    reader.stop();
    let times;
    try {
      ({ times } = await reader.result);
    } catch (error) {
      throw new Error(
        `the probe's read failed: ${error.message}${server.exited() ? `; the server exited: ${server.stderr().slice(-1500)}` : ""}`,
      );
    }
    const sorted = times.sort((a, b) => a - b);
    return { p50: pct(sorted, 50), p99: pct(sorted, 99), n: sorted.length };
  };
}

/** The event-loop delay histogram's counts per bucket, from /metrics. */
async function loopBuckets(server) {
  const text = (await get(`${server.url}/metrics`)).body.toString();
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
  return {
    p99: ms(p99),
    max: ms(max),
    samples: total,
    p99Ms: p99 === "+Inf" ? Number.POSITIVE_INFINITY : Number(p99) * 1000,
  };
}

/**
 * Runs the CLI with the binary's flags; resolves with its JSON output and peak RSS, or fails the bench.
 * `asClient`: it speaks to the server over HTTP as a client would from elsewhere, and yields the cores.
 */
function cli(args, env, { asClient = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, [...args, "--json"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (asClient) yieldCores(child.pid);
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

/** `count` prompt files of ~10 KB (front matter and Markdown), none of them in the store yet. */
function writePromptFiles(directory, count) {
  mkdirSync(directory, { recursive: true });
  for (let i = 0; i < count; i++) {
    const body = tenKbSections(2_000_000 + i)
      .map((s) => `# ${s.title}\n\n${s.content}`)
      .join("\n\n");
    writeFileSync(join(directory, `pushed-${i}.md`), `---\nid: pushed-${i}\nname: Pushed ${i}\n---\n${body}\n`);
  }
}

/**
 * The searches a person makes of the dashboard's list, each with the number of prompts it must match (core's
 * rule, applied to the names and ids heavy-seed.js gave): one prompt by its full name, a tenth of them, none,
 * a hundred by id, and the last page of everything.
 */
function dashboardSearches(seeded) {
  const prompts = [{ id: seeded.promptId, name: "Bench prompt 0" }];
  for (let i = 1; i < PROMPTS; i++)
    prompts.push({ id: `bench-${String(i).padStart(6, "0")}`, name: `Bench prompt ${i}` });
  const count = (q) => prompts.filter((p) => matchesSearch(p, q)).length;
  const last = Math.max(1, Math.ceil(PROMPTS / 50));
  return [
    `Bench prompt ${PROMPTS - 1}`,
    "prompt 5",
    "no such prompt",
    `bench-0${String(PROMPTS - 1)
      .padStart(6, "0")
      .slice(1, 4)}`,
  ]
    .map((q) => ({ query: `q=${encodeURIComponent(q)}&per_page=50`, matching: count(q) }))
    .concat([{ query: `page=${last}&per_page=50`, matching: PROMPTS }]);
}

/** A viewer of the seeded organization, made by the operator's CLI, signed in: its session cookie. */
async function viewerCookie(server, seeded, databaseUrl) {
  const email = `viewer-${Date.now()}@bench.local`;
  const { output } = await cli(["user", "create", email, "--org", seeded.orgId, "--role", "viewer"], {
    DATABASE_URL: databaseUrl,
    ...secretKeyEnv(databaseUrl),
  });
  return ownerCookie(server.url, { email, password: output.password });
}

async function suite(label, databaseUrl, freshUrl) {
  console.log(`${label}: seeding ${PROMPTS} prompts…`);
  const t0 = Date.now();
  const kept = KEEP && join(KEEP, `${label}.json`);
  const seeded =
    kept && existsSync(kept)
      ? JSON.parse(readFileSync(kept, "utf8")).seeded
      : await seedLarge(databaseUrl, PROMPTS, (n) => console.log(`  ${n}`));
  if (kept) writeFileSync(kept, JSON.stringify({ databaseUrl, seeded }));
  console.log(`${label}: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  // Rows copied in bulk leave PostgreSQL without statistics until autovacuum comes (off on these machines):
  // without them each page of 2 000 names sorted every remaining row. A live database has them.
  if (databaseUrl.startsWith("postgres")) {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query("ANALYZE");
    await c.end();
  }
  const server = await startServer(databaseUrl, { PROMPTSTORE_METRICS: "true" }, { nodeFlags: SERVER_FLAGS });
  const headers = { "x-api-key": seeded.key };
  const rows = [];
  try {
    /** A CLI command that speaks to the server over HTTP with the seeded key, as a client elsewhere would. */
    const overHttp = (command, path) =>
      cli([command, path, "--url", server.url, "--key", seeded.key], {}, { asClient: true });
    const measureJob = async (name, job, key) => {
      if (SKIP.has(key)) {
        rows.push({ name, skipped: true });
        return;
      }
      const idleStop = await probe(server, seeded);
      await new Promise((r) => setTimeout(r, 3000));
      const idle = await idleStop();
      resetPeakRss(server.pid);
      const before = await loopBuckets(server);
      const stop = await probe(server, seeded);
      const started = Date.now();
      const cpuBefore = cpuSeconds(server.pid);
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
        // The share of one core the server used over the job: near 100 %, its loop is the bottleneck; well
        // under it while reads wait, the server is waiting for a core the others hold.
        serverCpu: (cpuSeconds(server.pid) - cpuBefore) / ((Date.now() - started) / 1000),
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
          Array.from(
            { length: LIST_CLIENTS },
            (_, i) =>
              client("list", {
                url: server.url,
                path: "/api/v2/prompts",
                headers,
                address: `127.0.0.${3 + i}`,
                rounds: 2,
                expect: PROMPTS,
              }).result,
          ),
        );
        return { detail: `${PROMPTS} items, ${(lists[0].sizes[0] / 1e6).toFixed(1)} MB each` };
      },
      "list",
    );

    const cookie = await viewerCookie(server, seeded, databaseUrl);
    const searches = dashboardSearches(seeded);
    await measureJob(
      `Dashboard search, ${SEARCH_CLIENTS} clients at once, ${searches.length} searches each`,
      async () => {
        const answers = await Promise.all(
          Array.from(
            { length: SEARCH_CLIENTS },
            (_, i) =>
              client("search", {
                url: server.url,
                cookie,
                projectId: seeded.projectId,
                address: `127.0.0.${3 + LIST_CLIENTS + i}`,
                searches,
              }).result,
          ),
        );
        const times = answers.flatMap((a) => a.times).sort((a, b) => a - b);
        return { detail: `each answered in p50 ${pct(times, 50).toFixed(0)} ms, max ${times.at(-1).toFixed(0)} ms` };
      },
      "search",
    );

    const exported = join(dir, `${label}-export.json`);
    await measureJob(
      "`export` of the whole store",
      async () => {
        const { output, rssMb } = await overHttp("export", exported);
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
        const { output, rssMb } = await cli(["backup", backup], {
          DATABASE_URL: databaseUrl,
          ...secretKeyEnv(databaseUrl),
        });
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
        const { output, rssMb } = await overHttp("import", bundle);
        const created = output.prompts.filter((r) => r.created).length;
        if (created !== IMPORT_PROMPTS) throw new Error(`imported ${created} prompts`);
        return { detail: `${created} created`, rssMb };
      },
      "import",
    );

    const pushDir = join(dir, `${label}-push`);
    writePromptFiles(pushDir, PUSH_PROMPTS);
    await measureJob(
      `\`push\` of ${PUSH_PROMPTS} new prompt files`,
      async () => {
        const { output, rssMb } = await overHttp("push", pushDir);
        const created = output.prompts.filter((r) => r.result === "created").length;
        if (created !== PUSH_PROMPTS) throw new Error(`pushed ${created} prompts`);
        return { detail: `${created} created`, rssMb };
      },
      "push",
    );
    rmSync(pushDir, { recursive: true, force: true });

    await measureJob(
      "`restore` of that backup into an empty store (another database)",
      async () => {
        const fresh = await freshUrl();
        const { output, rssMb } = await cli(["restore", backup], { DATABASE_URL: fresh, ...secretKeyEnv(fresh) });
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

const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const only = process.env.BENCH_HEAVY_DATABASES?.split(",") ?? ["sqlite", "postgres"];
/**
 * BENCH_HEAVY_KEEP names a directory where the seeded stores are kept (a SQLite file, and a PostgreSQL database
 * that is not dropped, each named in `<database>.json`) and found again by the next run, to measure again
 * without seeding (PostgreSQL's took 207 to 690 s here). The jobs that write (import, push) add their prompts
 * to a kept store, and a second run's would then exist already: skip them with BENCH_HEAVY_SKIP=import,push.
 */
const KEEP = process.env.BENCH_HEAVY_KEEP;
if (KEEP) mkdirSync(KEEP, { recursive: true });
const keptUrl = (label) => {
  const file = KEEP && join(KEEP, `${label}.json`);
  return file && existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).databaseUrl : undefined;
};

const results = [];
const drops = [];
try {
  if (only.includes("sqlite")) {
    let n = 0;
    const fresh = async () => join(dir, `restored-${++n}.sqlite`);
    const file = keptUrl("sqlite") ?? join(KEEP ?? dir, "heavy.sqlite");
    results.push(["SQLite", await suite("sqlite", file, fresh)]);
    if (!KEEP) rmSync(file, { force: true });
  }
  if (only.includes("postgres")) {
    const main = keptUrl("postgres")
      ? { url: keptUrl("postgres") }
      : await postgresDatabase(POSTGRES_URL, "promptstore_heavy");
    if (!KEEP) drops.push(main);
    const fresh = async () => {
      const db = await postgresDatabase(POSTGRES_URL, "promptstore_heavy");
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
const existing = readFileSync(RESULTS, "utf8");
const loadAverage = (await import("node:os"))
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(", ");
/** A database's table from the section already written: a run of the other database alone keeps it. */
const earlierTable = (db) =>
  existing
    .slice(existing.indexOf(START))
    .match(new RegExp(String.raw`### ${db}\n[\s\S]*?(?=\n### |\n\*\*FAILED|\n${END})`))?.[0]
    ?.trimEnd();
const DATABASE_NAMES = { sqlite: "SQLite", postgres: "PostgreSQL" };
const measured = new Map(results);
const table = Object.entries(DATABASE_NAMES)
  .map(([key, db]) => (measured.has(db) ? [db, measured.get(db)] : only.includes(key) ? undefined : earlierTable(db)))
  .filter(Boolean)
  .map((entry) =>
    typeof entry === "string"
      ? entry
      : `### ${entry[0]}

Run ${new Date().toISOString()}, load average ${loadAverage} at its end.

| Heavy job | Read p50 / p99 ms, idle | Read p50 / p99 ms, during | Event-loop delay p99 / max ms, during | p99s ≤ 20 ms | Job s | Server CPU, % of a core | Server peak RSS MB | Job's peak RSS MB | |
|---|---|---|---|---|---|---|---|---|---|
${entry[1]
  .map((r) =>
    r.skipped
      ? `| ${r.name} | not run (BENCH_HEAVY_SKIP) | | | | | | | | |`
      : `| ${r.name} | ${f(r.idle.p50)} / ${f(r.idle.p99)} | ${f(r.during.p50)} / ${f(r.during.p99)} (${r.during.n} reads) | ${r.loop.p99} / ${r.loop.max} | ${r.during.p99 <= 20 && r.loop.p99Ms <= 20 ? "met" : "**missed**"} | ${r.seconds.toFixed(0)} | ${(r.serverCpu * 100).toFixed(0)} | ${f(r.serverRss)} | ${r.jobRss === undefined ? "–" : f(r.jobRss)} | ${r.detail} |`,
  )
  .join("\n")}`,
  )
  .join("\n\n");
const section = `${START}
## Heavy work

${PROMPTS} prompts of ~10 KB in one project (seeded through the store: one prompt made by the service, its rows
copied; on PostgreSQL then \`ANALYZE\`, as autovacuum would), the real binary with its heap flags (\`${readFileSync(BIN, "utf8").split("\n")[0].replace("#!/usr/bin/env -S node ", "")}\`),
metrics on. Each job runs alone. A probe reads one prompt from 127.0.0.2, one request at a time with 5 ms
between, for 3 s before the job (idle) and for the whole job (during), in a process of its own (the clients
that parse 40 MB lists would otherwise hold its event loop and add to its times). List clients come from
127.0.0.3 to 127.0.0.${2 + LIST_CLIENTS}, dashboard searches (a viewer's session) from the next ${SEARCH_CLIENTS}
addresses, each client a process, so the per-address connection cap stays on. The CLI jobs (\`export\`,
\`import\`, \`push\` over HTTP; \`backup\`, \`restore\` on the database) run as the binary with its flags.
The clients over HTTP (lists, searches, \`export\`, \`import\`, \`push\`) run at nice 19: in production they
are other machines, and here their parsing would take the cores the server, its database and the probe need;
\`backup\` and \`restore\` run at the server's priority, as on its host.
Event-loop delay: the server's \`promptstore_event_loop_delay_seconds\` histogram over the job (bucket
bounds: "≤ 20" means the bucket up to 20 ms). Peak RSS: VmHWM, reset before each job. Targets: read p99 ≤ 20
ms and event-loop delay p99 ≤ 20 ms during every job. The machine: 2 CPUs, shared by the server, its clients,
the CLI job and whatever else runs. A run of one database (\`BENCH_HEAVY_DATABASES\`) keeps the other's table as
it was, with its own time.

${table}
${failures.length > 0 ? `\n**FAILED**: ${failures.join("; ")}\n` : ""}${END}`;
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
