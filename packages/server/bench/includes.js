// npm run bench (server part): includes (issue 41). The real binary on SQLite holds two published prompts that
// serve the same five sections: one written out, one whose sections include ten pieces (two each). Cached reads
// of both are measured in interleaved rounds (autocannon, as bench/run.js); then a save of the prompt with ten
// includes is timed, one save after another. Writes its section of bench/results.md between the includes markers.
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { measure } from "./lib/load.js";
import { writeSection } from "./lib/model-bench.js";
import { startServer } from "./lib/processes.js";
import { seed } from "./lib/seed.js";

const START = "<!-- includes bench: start -->";
const END = "<!-- includes bench: end -->";
const ROUNDS = Number(process.env.BENCH_INCLUDES_ROUNDS ?? 3);
const SAVES = Number(process.env.BENCH_INCLUDES_SAVES ?? 200);
const TITLES = ["Role", "Policies", "Tone", "Tools", "Output Format"];

function call(url, method, path, key, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = process.hrtime.bigint();
    const req = request(
      `${url}${path}`,
      { method, headers: { "x-api-key": key, ...(payload ? { "content-type": "application/json" } : {}) } },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          resolve({
            status: res.statusCode,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            bytes: Buffer.byteLength(text),
            body: JSON.parse(text || "null"),
          });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

async function ok(response, what) {
  const r = await response;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};
const median = (values) => quantile(values, 0.5);

const piece = (i) =>
  `Rule ${i}: be precise about {{ company }}'s policy number ${i}, cite it by name, and keep answers short. ` +
  "If a request is ambiguous, ask one clarifying question before acting; never invent order numbers or prices.";

/** Five sections with two includes each, and a line of their own; `n` makes each save a new version. */
const includingSections = (n) =>
  TITLES.map((title, s) => ({
    title,
    content: `${title} (revision ${n}).\n{{> piece-${2 * s}}}\n{{> piece-${2 * s + 1}}}`,
  }));

const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-includes-"));
const databaseUrl = join(dir, "bench.sqlite");
let server;
try {
  const { key } = await seed(databaseUrl);
  server = await startServer(databaseUrl);
  const url = server.url;
  for (let i = 0; i < 10; i++) {
    await ok(
      call(url, "POST", "/api/v2/prompts", key, {
        name: `piece-${i}`,
        sections: [{ title: "Rule", content: piece(i) }],
        publish: true,
      }),
      `piece ${i}`,
    );
  }
  const including = await ok(
    call(url, "POST", "/api/v2/prompts", key, { name: "with-includes", sections: includingSections(0), publish: true }),
    "the prompt with includes",
  );
  const includingId = including.body.data.id;
  const expanded = (await ok(call(url, "GET", `/api/v2/prompts/${includingId}`, key), "read")).body.data;
  // The same text, written out: what the read of the other serves, with no include.
  const plain = await ok(
    call(url, "POST", "/api/v2/prompts", key, {
      name: "without-includes",
      sections: expanded.sections.map((s) => ({ title: s.title, content: s.content })),
      publish: true,
    }),
    "the prompt without includes",
  );
  const plainId = plain.body.data.id;
  const plainRead = await ok(call(url, "GET", `/api/v2/prompts/${plainId}`, key), "read");
  const includingRead = await ok(call(url, "GET", `/api/v2/prompts/${includingId}`, key), "read");
  if (plainRead.body.data.text !== includingRead.body.data.text) throw new Error("the two prompts serve other texts");

  const rounds = { plain: [], including: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const headers = { "x-api-key": key };
    rounds.plain.push(
      await measure(`cached read, no includes (round ${round + 1})`, {
        url: `${url}/api/v2/prompts/${plainId}`,
        pid: server.pid,
        headers,
      }),
    );
    rounds.including.push(
      await measure(`cached read, 10 includes (round ${round + 1})`, {
        url: `${url}/api/v2/prompts/${includingId}`,
        pid: server.pid,
        headers,
      }),
    );
  }

  const saves = [];
  for (let n = 1; n <= SAVES; n++) {
    const saved = await ok(
      call(url, "PUT", `/api/v2/prompts/${includingId}`, key, { sections: includingSections(n) }),
      `save ${n}`,
    );
    saves.push(saved.ms);
  }

  const rps = (rows) => median(rows.map((r) => r.rps));
  const p99 = (rows) => median(rows.map((r) => r.p99));
  const ratio = rps(rounds.including) / rps(rounds.plain);
  const saveP99 = quantile(saves, 0.99);
  const lines = [
    START,
    "## Includes",
    "",
    `Written by \`npm run bench\` (\`packages/server/bench/includes.js\`) on ${new Date().toISOString()}: ` +
      `${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end. The real binary on SQLite. Two ` +
      "published prompts serve the same five sections: one written out, one built from ten included pieces (two a " +
      `section). Cached reads: autocannon, 50 connections, ${ROUNDS} interleaved rounds, the median round. ` +
      `Saves: ${SAVES} saves of the prompt with ten includes, one after another, each a new version.`,
    "",
    "| Target | Reached | |",
    "|---|---|---|",
    `| Cached read with 10 includes within 5% of one without | ${(100 * ratio).toFixed(1)}% of its req/s ` +
      `(${rps(rounds.including).toFixed(0)} vs ${rps(rounds.plain).toFixed(0)}; p99 ${p99(rounds.including)} vs ` +
      `${p99(rounds.plain)} ms) | ${ratio >= 0.95 ? "met" : "**missed**"} |`,
    `| A save with 10 includes answers in under 20 ms (the median save) | p50 ${median(saves).toFixed(1)} ms ` +
      `(p95 ${quantile(saves, 0.95).toFixed(1)}, p99 ${saveP99.toFixed(1)} ms) | ${median(saves) < 20 ? "met" : "**missed**"} |`,
    "",
    `Answer sizes: ${includingRead.bytes} bytes with includes (it also lists the pins and each section's source), ` +
      `${plainRead.bytes} without. Every round (req/s): without ${rounds.plain.map((r) => r.rps.toFixed(0)).join(", ")}; ` +
      `with ${rounds.including.map((r) => r.rps.toFixed(0)).join(", ")}.`,
    END,
  ];
  writeSection(START, END, lines.join("\n"));
} finally {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
