// The read path on a system prompt of today's size (250 KB, core's test fixture) against the same read of a
// small prompt and against bare node:http answering the same bytes; then the server's memory, under the
// binary's heap flags, with 1 000 such prompts written and read. Writes its section of bench/results.md (between
// the big-prompt markers), leaving the other rows alone.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bigPromptMarkdown } from "@promptstore/core/testing/big-prompt";
import { DURATION_S, measure } from "./lib/load.js";
import { peakRssMb, resetPeakRss, startBareServer, startServer } from "./lib/processes.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const PROMPTS = Number(process.env.BENCH_BIG_PROMPT_COUNT ?? 1000);
const START = "<!-- server big prompt bench: start -->";
const END = "<!-- server big prompt bench: end -->";
const SHEBANG = readFileSync(fileURLToPath(new URL("../bin/promptstore.js", import.meta.url)), "utf8").split("\n")[0];

async function call(url, key, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return Buffer.byteLength(text);
}

/** Runs `work(i)` for 0 … n-1, `width` at a time. */
async function pool(n, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-big-"));
  const db = join(dir, "big.sqlite");
  const server = await startServer(db, { PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
  const key = server.events.find((e) => e.event === "bootstrap").key.key;
  const rows = [];
  let memory;
  try {
    const markdown = bigPromptMarkdown();
    await call(server.url, key, "POST", "/api/v2/prompts", { id: "big", name: "Big", markdown, publish: true });
    const small = "# Role\nYou help {{ customer_name }} of {{ company }}.\n\n# Rules\nBe brief.\n";
    await call(server.url, key, "POST", "/api/v2/prompts", {
      id: "small",
      name: "Small",
      markdown: small,
      publish: true,
    });
    const uncached = await startServer(db, { PROMPTSTORE_READ_CACHE: "false" });
    const headers = { "x-api-key": key };
    const bytesOf = async (id) =>
      Buffer.from(await (await fetch(`${server.url}/api/v2/prompts/${id}`, { headers })).arrayBuffer());
    const bigBytes = await bytesOf("big");
    const smallBytes = await bytesOf("small");
    const bareBig = await startBareServer(bigBytes);
    const bareSmall = await startBareServer(smallBytes);
    try {
      for (const [id, bytes, bare] of [
        ["small", smallBytes, bareSmall],
        ["big", bigBytes, bareBig],
      ]) {
        const path = `/api/v2/prompts/${id}`;
        const label =
          id === "big"
            ? `250 KB prompt (${bytes.length} bytes answered)`
            : `small prompt (${bytes.length} bytes answered)`;
        rows.push({
          label,
          bare: await measure(`${label}: bare node:http`, { url: bare.url, pid: bare.pid }),
          cached: await measure(`${label}: cached read`, { url: server.url + path, headers, pid: server.pid }),
          uncached: await measure(`${label}: uncached read`, { url: uncached.url + path, headers, pid: uncached.pid }),
        });
      }
    } finally {
      await Promise.all([uncached.stop(), bareBig.stop(), bareSmall.stop()]);
    }

    // 1 000 such prompts (each its own text), written and then read twice through the cached server.
    resetPeakRss(server.pid);
    const started = Date.now();
    await pool(PROMPTS, 4, (i) =>
      call(server.url, key, "POST", "/api/v2/prompts", {
        id: `agent-${i}`,
        name: `Agent ${i}`,
        markdown: bigPromptMarkdown({ seed: i + 2 }),
        publish: true,
      }),
    );
    const writeSeconds = (Date.now() - started) / 1000;
    const writePeak = peakRssMb(server.pid);
    resetPeakRss(server.pid);
    let readBytes = 0;
    const readStarted = Date.now();
    for (let pass = 0; pass < 2; pass++) {
      await pool(PROMPTS, 8, async (i) => {
        const bytes = await call(server.url, key, "GET", `/api/v2/prompts/agent-${i}`);
        readBytes += bytes;
      });
    }
    memory = {
      writeSeconds,
      writePeak,
      readPeak: peakRssMb(server.pid),
      readSeconds: (Date.now() - readStarted) / 1000,
      readMb: readBytes / 2 ** 20,
      dbMb: statSync(db).size / 2 ** 20,
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const ratio = (a, b) => (a.rps / b.rps).toFixed(2);
  const [small, big] = rows;
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(", ");
  const line = (row, kind) =>
    `| ${row.label}: ${kind} | ${Math.round(row[kind].rps)} | ${row[kind].p50} | ${row[kind].p99} | ${row[kind].non2xx} | ${row[kind].rssMb?.toFixed(0) ?? ""} |`;
  const section = [
    START,
    "## Server on a 250 KB prompt",
    "",
    `Written by \`npm run bench\` on ${new Date().toISOString()}: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node.js ${process.version},`,
    `the real binary (\`${SHEBANG.replace("#!/usr/bin/env -S ", "")}\`) on SQLite, autocannon with 50 connections for ${DURATION_S} s after a`,
    "warm-up, one round each (the other server rows run three). The prompt is core's test fixture (`bigPromptMarkdown()`).",
    `Load average when written: ${load} (other work shares the machine; compare rows of one run, not across runs).`,
    "Errors are requests that failed or timed out (autocannon's 10 s timeout).",
    "",
    "| Read | req/s | p50 ms | p99 ms | errors | peak RSS MB |",
    "|---|---:|---:|---:|---:|---:|",
    line(small, "bare"),
    line(small, "cached"),
    line(small, "uncached"),
    line(big, "bare"),
    line(big, "cached"),
    line(big, "uncached"),
    "",
    "| Target | Reached | |",
    "|---|---|---|",
    `| A cached 250 KB read keeps the small read's ratio to bare node:http | small ${ratio(small.cached, small.bare)}, 250 KB ${ratio(big.cached, big.bare)} of bare's req/s | ${big.cached.rps / big.bare.rps >= 0.9 * (small.cached.rps / small.bare.rps) ? "met" : "**missed**"} |`,
    `| Uncached 250 KB read measured | ${Math.round(big.uncached.rps)} req/s, p99 ${big.uncached.p99} ms (${ratio(big.uncached, big.bare)} of bare) | measured |`,
    `| Memory with ${PROMPTS} such prompts, under the binary's heap flags | writing them: peak RSS ${memory.writePeak.toFixed(0)} MB (${memory.writeSeconds.toFixed(0)} s); reading each twice (${memory.readMb.toFixed(0)} MB answered in ${memory.readSeconds.toFixed(0)} s): peak RSS ${memory.readPeak.toFixed(0)} MB; database ${memory.dbMb.toFixed(0)} MB | measured |`,
    END,
  ].join("\n");
  console.log(section);
  const existing = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
  const before = existing.includes(START) ? existing.slice(0, existing.indexOf(START)) : `${existing.trimEnd()}\n\n`;
  const after = existing.includes(END) ? existing.slice(existing.indexOf(END) + END.length) : "\n";
  writeFileSync(RESULTS, `${before}${section}${after}`);
}

await main();
