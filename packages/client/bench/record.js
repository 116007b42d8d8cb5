#!/usr/bin/env node
/**
 * The cost of `client.record(read, outcome)` on the application's thread (target: under 1 µs), and what the
 * background sending costs the process per outcome. Writes its section of bench/results.md at the repository
 * root, between the client record markers, leaving the other sections alone (part of `npm run bench`).
 *
 *   npm run build -w packages/client && node packages/client/bench/record.js
 *
 * The real server (packages/server/bin/promptstore.js) is started on a throw-away SQLite file, a prompt is
 * published and read, and its read is recorded BENCH_RECORDS times (default 1 000 000) after a warm-up, in
 * turns of 500 calls: only the calls are timed; between turns the event loop runs, and with it the sending of
 * batches of 500 to `POST /api/v2/outcomes`. When more than a buffer's worth is waiting, the loop waits for
 * the server (untimed), so that nothing is dropped and every outcome recorded is sent.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Promptstore } from "../dist/index.js";
import { startServer } from "./read.js";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const WARMUP = Math.min(200_000, RECORDS);
const TURN = 500;
const PROMPT = "record-bench";
const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const START = "<!-- client record bench: start -->";
const END = "<!-- client record bench: end -->";
const TARGET_NS = 1000;

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Records `count` outcomes of `read`; returns the ns spent inside record() alone. */
async function run(client, read, count) {
  let inside = 0n;
  for (let done = 0; done < count; done += TURN) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < TURN; i++) {
      client.record(read, {
        ok: (i & 7) !== 0,
        latency_ms: 100 + (i & 255),
        score: 0.5,
        tokens: { input: 120, output: 40 },
      });
    }
    inside += process.hrtime.bigint() - started;
    await turn();
    while (client.outcomeStats().pending > 8_000) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Number(inside);
}

export async function recordBench() {
  const load = loadavg()[0];
  const server = await startServer();
  try {
    const client = new Promptstore({ baseUrl: server.url, apiKey: server.key, mode: "ttl", ttlMs: 3_600_000 });
    await client.create({
      id: PROMPT,
      name: "Record bench",
      sections: [{ title: "Role", content: "You help customers of {{ company }}." }],
      publish: true,
    });
    const read = await client.get(PROMPT);
    await run(client, read, WARMUP);
    await client.flush();
    const cpuBefore = process.cpuUsage();
    const wallBefore = process.hrtime.bigint();
    const inside = await run(client, read, RECORDS);
    await client.flush();
    const wallNs = Number(process.hrtime.bigint() - wallBefore);
    const cpu = process.cpuUsage(cpuBefore);
    const stats = client.outcomeStats();
    await client.close();
    const result = {
      bench: "client-record",
      records: RECORDS,
      ns_per_record: Math.round((inside / RECORDS) * 10) / 10,
      // Everything this process spent (record(), JSON, fetch) per outcome: the sending's share on the same thread.
      process_cpu_ns_per_outcome: Math.round(((cpu.user + cpu.system) * 1000) / RECORDS),
      outcomes_per_second: Math.round(RECORDS / (wallNs / 1e9)),
      stats,
      load_average: Math.round(load * 10) / 10,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return result;
  } finally {
    await server.stop();
  }
}

/** Writes (or replaces) this bench's section of bench/results.md, after the client section. */
export function writeSection(r) {
  const section = `${START}
## Client SDK: \`record()\`

Written by \`node packages/client/bench/record.js\` (part of \`npm run bench -w packages/client\`) on ${new Date().toISOString()} (${cpus().length} cores, load average ${r.load_average} at the start, Node.js ${r.node}).

\`client.record(read, { ok, latency_ms, score, tokens })\` on a read held in memory, ${r.records.toLocaleString("en")} calls after a
warm-up, timed in turns of ${TURN} calls; between turns the event loop sends batches of 500 to the real server
(\`POST /api/v2/outcomes\`, SQLite) in the background. Target: under ${TARGET_NS} ns on the application's thread.

| record() ns per call | under ${TARGET_NS} ns | process CPU per outcome, sending included | outcomes/s end to end | sent (warm-up included) | dropped | refused |
|---:|---|---:|---:|---:|---:|---:|
| ${r.ns_per_record} | ${r.ns_per_record < TARGET_NS ? "met" : "**missed**"} | ${r.process_cpu_ns_per_outcome} ns | ${r.outcomes_per_second.toLocaleString("en")} | ${r.stats.sent.toLocaleString("en")} | ${r.stats.dropped} | ${r.stats.refused} |

record() checks the values, stamps the time and appends to a ring buffer: no I/O, no promise. The process CPU
column is everything the application's process spent per outcome (record(), the JSON of each batch, fetch),
measured with \`process.cpuUsage()\` over the run; the server's own cost is the outcomes bench's (server section).
${END}`;
  const existing = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
  let text;
  if (existing.includes(START)) text = existing.replace(new RegExp(`${START}[\\s\\S]*${END}`), section);
  else if (existing.includes("<!-- client bench: end -->")) {
    text = existing.replace("<!-- client bench: end -->", `<!-- client bench: end -->\n\n${section}`);
  } else text = `${existing.trimEnd()}\n\n${section}\n`;
  writeFileSync(RESULTS, text);
  console.log(`wrote the client record() section of ${RESULTS}`);
}

if (import.meta.url === `file://${process.argv[1]}`) writeSection(await recordBench());
