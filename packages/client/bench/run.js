#!/usr/bin/env node
// npm run bench -w packages/client: the SDK's read from memory, publish-to-client propagation (SQLite, and
// two instances on PostgreSQL when reachable), and record()'s cost (record.js). Writes its sections of
// bench/results.md at the repository root, between the client markers, leaving the other sections alone.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { POSTGRES_URL, withPostgres } from "./lib/postgres.js";
import { postgresPropagation, sqlitePropagation } from "./propagation.js";
import { readBench } from "./read.js";
import { recordBench, writeSection as writeRecordSection } from "./record.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const START = "<!-- client bench: start -->";
const END = "<!-- client bench: end -->";
const TARGET_P99_MS = 250;
const PROCESSES_NOTE = `up to ${process.env.BENCH_PROPAGATION_PROCESSES ?? 4}`;

const read = await readBench();
const rows = [...(await sqlitePropagation())];
const postgres = await withPostgres("promptstore_propagation", (url) => postgresPropagation(url));
if (postgres) rows.push(...postgres);

const check = (ok) => (ok ? "met" : "**missed**");
const section = `${START}
## Client SDK

Written by \`npm run bench -w packages/client\` on ${new Date().toISOString()} (${cpus().length} cores, Node.js ${process.version}).

**Read from memory.** \`await client.get(id)\` once the prompt is held, ${read.calls.toLocaleString("en")} calls after a
warm-up: **${read.ns_per_call} ns per call** in mode \`watch\` (stream live; ${read.requests_during_run} requests
reached the server during the run), ${read.ttl_ns_per_call} ns in mode \`ttl\`.

**Publish to client.** N SDK clients in mode \`watch\` hold a published prompt, spread over ${PROCESSES_NOTE}
child processes (1 000 applications do not share one event loop; the "1 process" rows put them all in one, the
harshest case for the clients' side). A version no client has read yet is published ${rows[0]?.publishes ?? 0} times through
the first instance. Latency runs from the moment the publish response arrived to each client's \`onChange\` (the new
version served from memory); "event" is when the event itself reached the client. The SDK opens the stream with
\`include=read\`, so a published event carries the production read it leads to and the clients serve it without a
request (docs/events.md); the server makes that read once per instance. After every publish each client's
\`get()\` must serve the new version from memory ("stale" counts those that did not). On PostgreSQL the clients are
split evenly across two instances. The "label move" rows hold \`get(id, { version: "staging" })\` instead, and move
staging with the same endpoint: its event carries no read, so every client reads the label again (the server's
read cache answers the herd with one database read). Target: p99 ≤ ${TARGET_P99_MS} ms. The load generator, the clients and the
servers share the machine's cores.

| Database | clients | processes | p50 ms | p99 ms | max ms | event p50 / p99 ms | stale | p99 ≤ ${TARGET_P99_MS} ms |
|---|---:|---:|---:|---:|---:|---|---:|---|
${rows.map((r) => `| ${r.label} | ${r.clients} | ${r.processes} | ${r.p50} | ${r.p99} | ${r.max} | ${r.eventP50} / ${r.eventP99} | ${r.stale} | ${check(r.p99 <= TARGET_P99_MS && r.stale === 0)} |`).join("\n")}
${postgres ? "" : `\nPostgreSQL at ${POSTGRES_URL.replace(/\/\/[^@/]*@/, "//")} was not reachable: its rows are missing.\n`}${END}`;

const existing = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
const text = existing.includes(START)
  ? existing.replace(new RegExp(`${START}[\\s\\S]*${END}`), section)
  : `${existing.trimEnd()}\n\n${section}\n`;
writeFileSync(RESULTS, text);
console.log(`wrote the client section of ${RESULTS}`);
// record()'s cost on the application's thread: a section of its own, after this one (record.js).
writeRecordSection(await recordBench());
