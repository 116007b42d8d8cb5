// npm run bench (server part): what the playground adds to a model's time to first token, and whether it
// streams without buffering. The tests' OpenAI stand-in (test/support/openai-stand-in.js)
// runs in this process; the server is the real binary on SQLite. Writes its section of bench/results.md
// (between the playground markers), leaving the other rows alone.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startStandIn } from "../test/support/openai-stand-in.js";
import { addConnection, writeSection } from "./lib/model-bench.js";
import { startServer } from "./lib/processes.js";
import { seed } from "./lib/seed.js";

const START = "<!-- playground bench: start -->";
const END = "<!-- playground bench: end -->";
const RUNS = Number(process.env.BENCH_PLAYGROUND_RUNS ?? 40);
const FIRST_TOKEN_MS = 50;
const PIECES = 20;
const PIECE_GAP_MS = 25;
const SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];

/** Reads an SSE or chunked body, calling `onText` with each piece as it arrives. */
async function readStream(response, onText) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onText(decoder.decode(value, { stream: true }), performance.now());
  }
}

/** One call straight to the stand-in: when its first content chunk arrived. */
async function direct(model) {
  const started = performance.now();
  const response = await fetch(`${model.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${model.apiKey}` },
    body: JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hi" }], stream: true }),
  });
  let first;
  let text = "";
  await readStream(response, (piece, at) => {
    text += piece;
    if (first === undefined && text.includes('"content":"t')) first = at - started;
  });
  return first;
}

/** One run through the playground: when its first delta event arrived, and when each delta arrived. */
async function viaPlayground(server, key, promptId, connection) {
  const started = performance.now();
  const response = await fetch(`${server.url}/api/v2/prompts/${promptId}/run`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ connection, model: { name: "bench" }, messages: [{ role: "user", content: "hi" }] }),
  });
  if (response.status !== 200) throw new Error(`run answered ${response.status}: ${await response.text()}`);
  const arrivals = [];
  let startAt;
  let text = "";
  await readStream(response, (piece, at) => {
    text += piece;
    const count = (text.match(/event: delta/g) ?? []).length;
    while (arrivals.length < count) arrivals.push(at);
    if (startAt === undefined && text.includes("event: start")) startAt = at - started;
  });
  if (!text.includes("event: done")) throw new Error(`run did not finish: ${text.slice(-300)}`);
  return { ttft: arrivals[0] - started, start: startAt, arrivals };
}

const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-playground-"));
const databaseUrl = join(dir, "bench.sqlite");
const env = {
  PROMPTSTORE_SECRET_KEY: SECRET,
  PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true",
  PROMPTSTORE_MODEL_TIMEOUT_SECONDS: "30",
};
// The tests' stand-in (test/support/openai-stand-in.js), the only one: first piece after FIRST_TOKEN_MS, then
// the rest PIECE_GAP_MS apart.
const model = await startStandIn();
model.on("bench", {
  kind: "stream",
  pieces: Array.from({ length: PIECES }, (_, i) => `t${i} `),
  firstDelayMs: FIRST_TOKEN_MS,
  delayMs: PIECE_GAP_MS,
});
let server;
try {
  const seeded = await seed(databaseUrl);
  const connection = await addConnection(databaseUrl, env, seeded.projectId, "bench", model);
  server = await startServer(databaseUrl, env);

  // Warm both paths, then alternate them so the machine's noise falls on both alike.
  for (let i = 0; i < 3; i++) {
    await direct(model);
    await viaPlayground(server, seeded.key, seeded.promptId, connection);
  }
  const directTtft = [];
  const playgroundTtft = [];
  const lags = [];
  const starts = [];
  const reads = [];
  for (let i = 0; i < RUNS; i++) {
    directTtft.push(await direct(model));
    model.sent.length = 0;
    const run = await viaPlayground(server, seeded.key, seeded.promptId, connection);
    playgroundTtft.push(run.ttft);
    starts.push(run.start);
    const before = performance.now();
    await (
      await fetch(`${server.url}/api/v2/prompts/${seeded.promptId}`, { headers: { "x-api-key": seeded.key } })
    ).text();
    reads.push(performance.now() - before);
    // How long after leaving the stand-in each piece reached the client (same process, same clock).
    for (const [i, at] of run.arrivals.entries()) lags.push(at - model.sent[i]);
  }
  const added = median(playgroundTtft) - median(directTtft);
  const lag = { median: median(lags), p90: p90(lags), max: Math.max(...lags) };
  const streamMs = (PIECES - 1) * PIECE_GAP_MS;
  const section = [
    START,
    "## Playground",
    "",
    `Written by \`npm run bench\` (packages/server/bench/playground.js) on ${new Date().toISOString()}. The real`,
    "binary on SQLite runs a prompt against the tests' OpenAI stand-in (test/support/openai-stand-in.js), in the bench process, streaming the OpenAI",
    `format: first piece after ${FIRST_TOKEN_MS} ms, then ${PIECES} pieces ${PIECE_GAP_MS} ms apart. ${RUNS} runs straight to the`,
    "stand-in and through `POST /api/v2/prompts/:id/run`, alternated; time to first token is from sending the",
    "request to the first piece of content reaching the client. A piece's lag is from the stand-in writing it to",
    "the client reading it as an SSE `delta` (both in the bench process).",
    "",
    "| Target | Reached | |",
    "|---|---|---|",
    `| The playground adds at most 20 ms to the provider's time to first token (medians) | ${added.toFixed(1)} ms (${median(playgroundTtft).toFixed(1)} vs ${median(directTtft).toFixed(1)} ms) | ${added <= 20 ? "met" : "**missed**"} |`,
    `| Streams without buffering: each piece reaches the client as it leaves the provider (lag p90 well under the ${PIECE_GAP_MS} ms between pieces; buffering would hold pieces up to ${streamMs} ms) | lag median ${lag.median.toFixed(1)} ms, p90 ${lag.p90.toFixed(1)} ms, max ${lag.max.toFixed(1)} ms | ${lag.p90 < PIECE_GAP_MS ? "met" : "**missed**"} |`,
    "",
    `Time to first token, p90: ${p90(directTtft).toFixed(1)} ms direct, ${p90(playgroundTtft).toFixed(1)} ms through the playground.`,
    `Where the added time goes (medians): the run's \`start\` event (every check made, the connection opened, before`,
    `the provider is called) reaches the client after ${median(starts).toFixed(1)} ms; a plain read of the same prompt from the same`,
    `server takes ${median(reads).toFixed(1)} ms on this machine in the same rounds (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores when written).`,
    END,
  ].join("\n");
  writeSection(START, END, section);
} finally {
  await server?.stop();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
}
