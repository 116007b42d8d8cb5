// npm run bench (server part): evaluations (issue 38). The real binary on SQLite evaluates two versions of a
// prompt over 1 000 cases at concurrency 8 against the tests' OpenAI stand-in answering in 200 ms, while an
// application reads the prompt from another loopback address; then asks for the same evaluation again
// (reused: nothing sent). Writes its section of bench/results.md between the evaluations markers.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startStandIn } from "../test/support/openai-stand-in.js";
import { addConnection, writeSection } from "./lib/model-bench.js";
import { peakRssMb, resetPeakRss, startServer } from "./lib/processes.js";
import { seed } from "./lib/seed.js";

const START = "<!-- evaluations bench: start -->";
const END = "<!-- evaluations bench: end -->";
const CASES = Number(process.env.BENCH_EVALUATION_CASES ?? 1000);
const ANSWER_MS = 200;
const CONCURRENCY = 8;
const SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};

/** CPU time (user + system) of a process so far, in ms, from /proc. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** A JSON request; `localAddress` spreads clients over loopback addresses (the per-address cap stays on). */
function call(url, method, path, key, body, localAddress) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      {
        method,
        headers: { "x-api-key": key, ...(payload ? { "content-type": "application/json" } : {}) },
        ...(localAddress ? { localAddress } : {}),
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString() || "null") }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-evaluations-"));
const databaseUrl = join(dir, "bench.sqlite");
const env = { PROMPTSTORE_SECRET_KEY: SECRET, PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" };
const model = await startStandIn();
// The answer depends on the request alone: the last word of the system prompt, after ANSWER_MS.
const answer = (body) => ({ content: `ok ${String(body.messages[0].content).length}` });
model.on("bench-eval", { kind: "compute", firstDelayMs: ANSWER_MS, pieceChars: 1000, answer });
// The same answers at once: what is left of a case's time is the server's own (and the stand-in's, small).
model.on("bench-instant", { kind: "compute", pieceChars: 1000, answer });
const INSTANT_CASES = Number(process.env.BENCH_EVALUATION_INSTANT_CASES ?? 250);
let server;
try {
  const seeded = await seed(databaseUrl);
  const connection = await addConnection(databaseUrl, env, seeded.projectId, "bench", model);
  // BENCH_SERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server over the run.
  const nodeFlags = process.env.BENCH_SERVER_NODE_FLAGS?.split(" ").filter(Boolean);
  server = await startServer(databaseUrl, env, nodeFlags?.length ? { nodeFlags } : {});
  const key = seeded.key;
  const promptId = seeded.promptId;
  // A second version: production and latest differ.
  const saved = await call(server.url, "PUT", `/api/v2/prompts/${promptId}`, key, {
    sections: [{ title: "Role", content: "You are the second version for {{ customer }}." }],
  });
  if (saved.status !== 200 && saved.status !== 201) throw new Error(`save: ${JSON.stringify(saved.body)}`);
  const cases = Array.from({ length: CASES }, (_, i) => ({ vars: { customer: `customer ${i}` } }));
  const created = await call(server.url, "POST", "/api/v2/datasets", key, { name: "bench", cases });
  if (created.status !== 201) throw new Error(`dataset: ${JSON.stringify(created.body)}`);
  /** Reads the evaluation every 250 ms until it has ended. */
  const until = async (id) => {
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      const seen = (await call(server.url, "GET", `/api/v2/evaluations/${id}?limit=1`, key)).body.data;
      if (seen.status !== "running") return seen;
    }
  };
  const body = {
    versions: ["production", "latest"],
    dataset: created.body.data.id,
    checks: [
      { type: "contains", value: "ok" },
      { type: "max_chars", value: 100 },
    ],
    connection,
    model: { name: "bench-eval" },
    concurrency: CONCURRENCY,
  };

  // The application: one read at a time from 127.0.0.2, 20 ms apart, for the whole evaluation.
  const reads = [];
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const at = performance.now();
      const res = await call(server.url, "GET", `/api/v2/prompts/${promptId}`, key, undefined, "127.0.0.2");
      if (res.status !== 200) throw new Error(`read answered ${res.status}`);
      reads.push(performance.now() - at);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  resetPeakRss(server.pid);
  const cpuBefore = cpuMs(server.pid);
  const started = performance.now();
  const res = await call(server.url, "POST", `/api/v2/prompts/${promptId}/evaluations`, key, body);
  if (res.status !== 202) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
  const view = await until(res.body.data.id);
  const wallS = (performance.now() - started) / 1000;
  const cpu = cpuMs(server.pid) - cpuBefore;
  reading = false;
  await reader;
  const peak = peakRssMb(server.pid);
  if (view.status !== "done") throw new Error(`evaluation ended ${view.status}: ${view.reason}`);
  const cells = CASES * 2;
  const ideal = (cells * (ANSWER_MS / 1000)) / CONCURRENCY;
  const perCase = cpu / cells;
  const readP99 = quantile(reads, 0.99);

  const reusedAt = performance.now();
  const again = await call(server.url, "POST", `/api/v2/prompts/${promptId}/evaluations`, key, body);
  const reusedMs = performance.now() - reusedAt;
  if (again.status !== 200 || again.body.data.reused !== true)
    throw new Error(`not reused: ${JSON.stringify(again.body).slice(0, 300)}`);
  const asked = model.requests.length;

  // The server's own time per case: an instant provider, one case at a time, over a dataset of its own.
  const instantCases = Array.from({ length: INSTANT_CASES }, (_, i) => ({ vars: { customer: `instant ${i}` } }));
  const instantSet = await call(server.url, "POST", "/api/v2/datasets", key, { name: "instant", cases: instantCases });
  const instantAt = performance.now();
  const instant = await call(server.url, "POST", `/api/v2/prompts/${promptId}/evaluations`, key, {
    ...body,
    dataset: instantSet.body.data.id,
    model: { name: "bench-instant" },
    concurrency: 1,
  });
  const instantView = await until(instant.body.data.id);
  if (instantView.status !== "done") throw new Error(`instant evaluation ended ${instantView.status}`);
  // The last poll may have waited up to 250 ms after the end: taken off, as the end is known to the row.
  const ownMs = (Date.parse(instantView.finished_at) - Date.parse(instantView.created_at)) / (INSTANT_CASES * 2);
  const ownWallMs = (performance.now() - instantAt) / (INSTANT_CASES * 2);

  const section = [
    START,
    "## Evaluations",
    "",
    `Written by \`npm run bench\` (packages/server/bench/evaluations.js) on ${new Date().toISOString()}. The real binary on`,
    `SQLite evaluates two versions over ${CASES} cases (2 checks each), concurrency ${CONCURRENCY}, against the tests' OpenAI stand-in`,
    `answering each request after ${ANSWER_MS} ms; an application reads the prompt from 127.0.0.2 meanwhile, one read every 20 ms.`,
    "The server's own time per case is the span an evaluation records (start to end) over its cells against an instant answer, one at a time; the CPU time (user + system, /proc) over the 200 ms run is shown beside it, the reader's reads and the bench's polls included.",
    "",
    "| Target | Reached | |",
    "|---|---|---|",
    `| Within 10% of the ideal ${cells} × ${ANSWER_MS / 1000} s / ${CONCURRENCY} = ${ideal.toFixed(0)} s | ${wallS.toFixed(1)} s (${((wallS / ideal - 1) * 100).toFixed(1)}% over) | ${wallS <= ideal * 1.1 ? "met" : "**missed**"} |`,
    `| The server's own time per case under 5 ms (an instant provider, one case at a time, ${INSTANT_CASES} cases × 2 versions: from start to end as the evaluation records them) | ${ownMs.toFixed(2)} ms per case and version (${ownWallMs.toFixed(2)} ms seen by the client, polling every 250 ms); CPU over the 200 ms run: ${perCase.toFixed(2)} ms per case and version, the reader's reads included | ${ownMs < 5 ? "met" : "**missed**"} |`,
    `| An application's read p99 ≤ 20 ms during the evaluation | p99 ${readP99.toFixed(1)} ms over ${reads.length} reads (median ${quantile(reads, 0.5).toFixed(1)} ms) | ${readP99 <= 20 ? "met" : "**missed**"} |`,
    `| A reused evaluation of ${CASES} cases answers in under 200 ms | ${reusedMs.toFixed(0)} ms, no provider call (${asked} requests in all, ${cells} for the first) | ${reusedMs < 200 && asked === cells ? "met" : "**missed**"} |`,
    `| Memory bounded: answers stream to the database | peak RSS ${peak.toFixed(0)} MB over the evaluation | |`,
    "",
    `Load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores when written.`,
    END,
  ].join("\n");
  writeSection(START, END, section);
} finally {
  await server?.stop();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
}
