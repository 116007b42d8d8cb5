// npm run bench (server part): a hostile provider must not hold the server. The real binary on SQLite, under
// its own heap limits, runs prompts against the tests' OpenAI stand-in in its four hostile modes (endless small
// deltas, 60 KB deltas, one line without a newline, a drip of comments), several runs at once, round after round.
// The stand-in and the clients reading the runs live in a child process (bench/lib/hostile-flood.js), so this
// process does nothing but ask /healthz every 10 ms and read the server's RSS. Writes its section of
// bench/results.md (between the hostile-provider markers).
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { addConnection, writeSection } from "./lib/model-bench.js";
import { startServer } from "./lib/processes.js";
import { seed } from "./lib/seed.js";

const START = "<!-- hostile-provider bench: start -->";
const END = "<!-- hostile-provider bench: end -->";
const SECONDS = Number(process.env.BENCH_HOSTILE_SECONDS ?? 10);
const SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const HEALTHZ_MS = 50;

const MODES = [
  {
    model: "endless",
    behaviour: { kind: "endless", deltaBytes: 512 },
    parallel: 4,
    what: "endless stream of 512-byte deltas",
  },
  {
    model: "huge",
    behaviour: { kind: "endless", deltaBytes: 60_000 },
    parallel: 4,
    what: "endless stream of 60 KB deltas",
  },
  { model: "flat", behaviour: { kind: "no_newlines" }, parallel: 4, what: "one line without a newline, 64 KB blocks" },
  {
    model: "drip",
    behaviour: { kind: "drip", intervalMs: 500 },
    parallel: 8,
    what: "a comment every 500 ms, nothing else",
  },
];

const quantile = (values, q) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))];

function rssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024;
}

const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-hostile-"));
const databaseUrl = join(dir, "bench.sqlite");
const env = {
  PROMPTSTORE_SECRET_KEY: SECRET,
  PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true",
  PROMPTSTORE_MODEL_TIMEOUT_SECONDS: "2",
  PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS: "4",
  PROMPTSTORE_DEFAULT_PLAN: "unlimited",
};
const flood = fork(fileURLToPath(new URL("./lib/hostile-flood.js", import.meta.url)), [], { stdio: "inherit" });
const model = await new Promise((resolve) => flood.once("message", resolve));
let server;
try {
  const seeded = await seed(databaseUrl);
  const connection = await addConnection(databaseUrl, env, seeded.projectId, "hostile", model);
  server = await startServer(databaseUrl, env);
  const rows = [];
  for (const mode of MODES) {
    const latencies = [];
    let failures = 0;
    let peak = rssMb(server.pid);
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        try {
          const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) });
          await res.arrayBuffer();
          if (res.status !== 200) failures++;
        } catch {
          failures++;
        }
        latencies.push(performance.now() - started);
        peak = Math.max(peak, rssMb(server.pid));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    flood.send({
      flood: {
        server: server.url,
        key: seeded.key,
        prompt: seeded.promptId,
        connection,
        model: mode.model,
        behaviour: mode.behaviour,
        parallel: mode.parallel,
        seconds: SECONDS,
      },
    });
    const done = await new Promise((resolve) => flood.once("message", resolve));
    probing = false;
    await probe;
    rows.push({ mode, done, latencies, failures, peak, alive: !server.exited() });
    if (server.exited()) break;
  }
  const ok = (row) => row.alive && row.failures === 0 && Math.max(...row.latencies) < HEALTHZ_MS;
  const section = [
    START,
    "## A hostile provider",
    "",
    `Written by \`npm run bench\` (packages/server/bench/hostile-provider.js) on ${new Date().toISOString()}. The real binary`,
    "on SQLite (its own heap limits, 1 MiB answer cap, idle limit 2 s, total limit 4 s) runs a prompt against the",
    `tests' stand-in in each hostile mode for ${SECONDS} s, round after round, several runs at once. The stand-in and the`,
    "clients reading the runs are in a child process; the bench's own process only asks `/healthz` every 10 ms and",
    `reads the server's RSS. Target: the server stays up, and /healthz answers in under ${HEALTHZ_MS} ms throughout.`,
    "",
    "| Provider | Runs at once | Runs | How they ended | /healthz p50 / p99 / max (asked) | Server peak RSS | |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (row) =>
        `| ${row.mode.what} | ${row.mode.parallel} | ${row.done.runs} | ${Object.entries(row.done.ends)
          .map(([k, v]) => `${k} ${v}`)
          .join(
            ", ",
          )} | ${quantile(row.latencies, 0.5).toFixed(1)} / ${quantile(row.latencies, 0.99).toFixed(1)} / ${Math.max(...row.latencies).toFixed(1)} ms (${row.latencies.length}) | ${row.peak.toFixed(1)} MB | ${ok(row) ? "met" : "**missed**"} |`,
    ),
    "",
    `Load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores when written.`,
    END,
  ].join("\n");
  writeSection(START, END, section);
} finally {
  await server?.stop();
  flood.send("close");
  rmSync(dir, { recursive: true, force: true });
}
