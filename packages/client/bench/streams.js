#!/usr/bin/env node
/**
 * 10 000 watching event streams on one instance (issue 22): raw readers in child processes, each stream on
 * its own connection from one of many loopback source addresses (127.0.0.2, 127.0.0.3, …) so that the
 * server's per-address connection cap stays at its default, as in production. A version is published again
 * and again through the same instance; each stream's receipt of the event is timed against the moment the
 * publish response arrived. Every stream must receive every publish, and the server must live through it:
 * anything else throws. Records the server's peak RSS, its resident memory with the streams open, and its
 * event-loop delay (`promptstore_event_loop_delay_seconds` from /metrics) and its major collections, with the
 * shebang's heap flags and with a larger old space. Prints one JSON line per run and returns the rows to
 * bench/streams-run.js, which writes them to bench/results.md.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN_NODE_FLAGS, peakRssMb, resetPeakRss, startServer } from "../../server/bench/lib/processes.js";
import { seed } from "../../server/bench/lib/seed.js";
import { startWorkerProcess } from "./lib/worker-process.js";

export const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
/**
 * Reader processes: one per core of the 2-core machines. With the readers reading through `onread`, 8 processes
 * made the floor's p99 218 to 241 ms and 2 made it 165 (2026-11-27): 8 processes on 2 cores mostly wait their turn.
 */
export const PROCESSES = Number(process.env.BENCH_STREAMS_PROCESSES ?? 2);
export const PUBLISHES = Number(process.env.BENCH_STREAMS_PUBLISHES ?? 10);
/** Streams per source address: under the server's default per-address cap (256), with room to spare. */
export const PER_ADDRESS = Number(process.env.BENCH_STREAMS_PER_ADDRESS ?? 200);
/** `plain`: the events alone; `read`: `?include=read`, each published event carrying its read, as the SDK asks. */
export const MODES = (process.env.BENCH_STREAMS_MODES ?? "plain,read").split(",").filter(Boolean);
/**
 * Old-space sizes (MB) to run the server with besides the shebang's, its other flags kept: what the case needs.
 * Empty: the shebang's flags only.
 */
export const OLD_SPACES = (process.env.BENCH_STREAMS_OLD_SPACE ?? "192").split(",").filter(Boolean).map(Number);
const OPEN_CONCURRENCY = 32;
const SEEN_TIMEOUT_MS = 30_000;
/** Connections beyond the streams the server must accept: the publishes and the /metrics scrapes. */
const SPARE_CONNECTIONS = 100;
const WORKER = fileURLToPath(new URL("./streams-worker.js", import.meta.url));

export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const now = () => performance.timeOrigin + performance.now();
export const round = (n, digits = 1) => Number(n.toFixed(digits));

/**
 * The server's environment. The per-address cap is left at its default (256 without a trusted proxy). The
 * organization is on the unlimited plan (bench/lib/seed.js), which has no cap on open streams. The cap on
 * connections in all (PROMPTSTORE_MAX_CONNECTIONS, 10 000 by default) is raised just above the stream count:
 * at the default, 10 000 streams would leave no connection for the publish.
 */
export const serverEnv = () => ({
  PROMPTSTORE_METRICS: "true",
  PROMPTSTORE_MAX_CONNECTIONS: String(STREAMS + SPARE_CONNECTIONS),
});

/** How many of the STREAMS readers each of the PROCESSES opens. */
const streamsPerProcess = () =>
  Array.from({ length: PROCESSES }, (_, p) => Math.floor(STREAMS / PROCESSES) + (p < STREAMS % PROCESSES ? 1 : 0));

/**
 * Source addresses for each reader process, whole addresses of its own (127.0.0.2, 127.0.0.3, … in turn), as
 * many as its `count` streams need at PER_ADDRESS each.
 */
function sourceAddresses(counts) {
  let next = 2;
  const lists = counts.map((count) =>
    Array.from({ length: Math.ceil(count / PER_ADDRESS) }, () => `127.0.0.${next++}`),
  );
  if (next > 255) throw new Error("more source addresses than 127.0.0.2-254 offer: raise BENCH_STREAMS_PER_ADDRESS");
  return lists;
}

/**
 * STREAMS readers of `url`'s event stream (`includeRead`: `?include=read`), spread over PROCESSES processes, each
 * from source addresses of its own. `open()` opens them all and throws unless every one said ready. `publish(
 * version, send)` arms them for `version`, runs `send` (which resolves with the moment receipts count from) and
 * resolves with every stream's latency and the bytes of the event one received; it throws unless all STREAMS
 * received it. `check()` throws once a stream was lost, or when `alive` does. `what` names the run in errors.
 */
export function startReaders({ url, key, includeRead, what, alive = () => {} }) {
  const counts = streamsPerProcess();
  const addresses = sourceAddresses(counts);
  const losses = [];
  const workers = counts.map((count, p) =>
    startWorkerProcess(
      WORKER,
      {
        STREAMS_WORKER: JSON.stringify({
          url,
          key,
          count,
          addresses: addresses[p],
          includeRead,
          openConcurrency: OPEN_CONCURRENCY,
        }),
      },
      "reader",
      120_000,
      (message) => {
        if (message.type !== "lost") return false;
        losses.push(message);
        return true;
      },
    ),
  );
  const check = () => {
    alive();
    if (losses.length > 0) {
      const first = losses[0];
      throw new Error(`${losses.length} streams lost in "${what}", the first from ${first.address}: ${first.why}`);
    }
  };
  let publishes = 0;
  return {
    addresses: addresses.flat().length,
    started: Promise.all(workers.map((w) => w.started)),
    check,
    async open() {
      const opened = await Promise.all(workers.map((w) => w.ask({ type: "open" }, "opened", 600_000)));
      check();
      const ready = opened.reduce((n, o) => n + o.ready, 0);
      if (ready !== STREAMS) throw new Error(`only ${ready} of ${STREAMS} streams said ready in "${what}"`);
    },
    async publish(version, send) {
      const n = ++publishes;
      await Promise.all(workers.map((w) => w.ask({ type: "arm", version }, "armed")));
      const everyone = Promise.all(workers.map((w) => w.answer("seen", SEEN_TIMEOUT_MS)));
      const from = await send();
      let seen;
      try {
        seen = await everyone;
      } catch {
        check();
        const reports = await Promise.all(workers.map((w) => w.ask({ type: "report" }, "reported")));
        const received = reports.reduce((sum, r) => sum + r.received, 0);
        throw new Error(`publish ${n} of "${what}" reached ${received} of ${STREAMS} streams in ${SEEN_TIMEOUT_MS} ms`);
      }
      const latencies = seen.flatMap(({ times }) => times.map((at) => Math.max(0, at - from)));
      if (latencies.length !== STREAMS) {
        throw new Error(`publish ${n} of "${what}" reached ${latencies.length} of ${STREAMS} streams`);
      }
      check();
      return { latencies, sample: seen[0].sample };
    },
    close: () => Promise.all(workers.map((w) => w.close())),
  };
}

/**
 * One scrape of the server's /metrics: its event-loop delay histogram (cumulative counts by upper bound in
 * seconds, and the sum), its major collections (prom-client's `nodejs_gc_duration_seconds`, kind="major":
 * count and seconds) and its heap in use.
 */
async function scrape(server) {
  const text = await fetch(`${server.url}/metrics`).then((r) => r.text());
  const buckets = [];
  let sum = 0;
  const gc = { count: 0, seconds: 0, marking: 0 };
  let heapMb;
  for (const line of text.split("\n")) {
    const bucket = /^promptstore_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\S+)/.exec(line);
    if (bucket) buckets.push({ le: bucket[1] === "+Inf" ? Infinity : Number(bucket[1]), count: Number(bucket[2]) });
    const total = /^promptstore_event_loop_delay_seconds_sum (\S+)/.exec(line);
    if (total) sum = Number(total[1]);
    const major = /^nodejs_gc_duration_seconds_(count|sum)\{kind="major"\} (\S+)/.exec(line);
    if (major?.[1] === "count") gc.count = Number(major[2]);
    else if (major) gc.seconds = Number(major[2]);
    // V8 marks the old space in steps between tasks before a major collection's final pause: that is its work too.
    const marking = /^nodejs_gc_duration_seconds_sum\{kind="incremental"\} (\S+)/.exec(line);
    if (marking) gc.marking = Number(marking[1]);
    const heap = /^nodejs_heap_size_used_bytes (\S+)/.exec(line);
    if (heap) heapMb = round(Number(heap[1]) / 1024 / 1024);
  }
  if (buckets.length === 0) throw new Error("the server's /metrics has no promptstore_event_loop_delay_seconds");
  return { buckets, sum, gc, heapMb };
}

/** Major collections between two scrapes: how many, and the time they took with their incremental marking (ms). */
const gcBetween = (before, after) => ({
  major: after.gc.count - before.gc.count,
  ms: Math.round((after.gc.seconds - before.gc.seconds + after.gc.marking - before.gc.marking) * 1000),
});

/**
 * The delay samples taken between two scrapes: the bucket bound that holds the p99 and the highest non-empty
 * bucket's bound (ms; a histogram gives bounds, not exact values), and the mean.
 */
function delayBetween(before, after) {
  const counts = after.buckets.map((b, i) => ({ le: b.le, count: b.count - (before.buckets[i]?.count ?? 0) }));
  const total = counts[counts.length - 1].count;
  const bound = (le) => (le === Infinity ? "> 2500" : `≤ ${round(le * 1000, 1)}`);
  const p99 = counts.find((b) => b.count >= 0.99 * total) ?? counts[counts.length - 1];
  let max = counts[0];
  for (let i = 0; i < counts.length; i++) if (counts[i].count > (i === 0 ? 0 : counts[i - 1].count)) max = counts[i];
  return {
    samples: total,
    p99: bound(p99.le),
    max: bound(max.le),
    mean: total === 0 ? 0 : round(((after.sum - before.sum) / total) * 1000, 2),
  };
}

function residentMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const line = status.split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** One run: STREAMS readers in `mode`, PUBLISHES publishes, on `server`. Throws on any miss. */
async function watch(label, flags, server, seeded, state, mode) {
  const publish = async (version) => {
    const res = await fetch(`${server.url}/api/v2/prompts/${seeded.promptId}/publish`, {
      method: "POST",
      headers: { "x-api-key": seeded.key, "content-type": "application/json" },
      body: JSON.stringify({ version }),
    });
    if (res.status !== 200) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
    return now();
  };
  const alive = () => {
    if (server.exited()) throw new Error(`the server exited during "${label}": ${server.stderr()}`);
  };

  // Settle the heap of the previous run, then take the baseline.
  await new Promise((r) => setTimeout(r, 2000));
  const rssBefore = residentMb(server.pid);
  resetPeakRss(server.pid);
  const readers = startReaders({ url: server.url, key: seeded.key, includeRead: mode === "read", what: label, alive });
  try {
    await readers.started;
    const openStarted = now();
    const delayOpening = await scrape(server);
    await readers.open();
    const openSeconds = round((now() - openStarted) / 1000);
    const delayOpen = delayBetween(delayOpening, await scrape(server));
    await new Promise((r) => setTimeout(r, 2000));
    const rssOpen = residentMb(server.pid);
    const { heapMb: heapOpen } = await scrape(server);

    const latencies = [];
    const perPublish = [];
    let sample;
    const delayStart = await scrape(server);
    for (let n = 1; n <= PUBLISHES; n++) {
      // Away from whatever production is: every publish moves it, and records one event.
      const target = state.versions.find((v) => v !== state.current);
      const seen = await readers.publish(target, () => publish(target));
      state.current = target;
      latencies.push(...seen.latencies);
      perPublish.push(seen.latencies.length);
      sample = seen.sample;
      await new Promise((r) => setTimeout(r, 200));
    }
    const delayEnd = await scrape(server);
    const delayPublishing = delayBetween(delayStart, delayEnd);
    const gcPublishing = gcBetween(delayStart, delayEnd);
    readers.check();
    latencies.sort((a, b) => a - b);
    const row = {
      label,
      flags,
      mode,
      streams: STREAMS,
      processes: PROCESSES,
      addresses: readers.addresses,
      publishes: PUBLISHES,
      reachedAll: perPublish.filter((c) => c === STREAMS).length,
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1]),
      openSeconds,
      rssBeforeMb: round(rssBefore),
      heapBeforeMb: delayOpening.heapMb,
      rssOpenMb: round(rssOpen),
      heapOpenMb: heapOpen,
      peakRssMb: round(peakRssMb(server.pid)),
      perStreamKb: round(((rssOpen - rssBefore) * 1024) / STREAMS, 2),
      delayOpen,
      delayPublishing,
      gcPublishing,
      load: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
    };
    console.log(JSON.stringify({ bench: "streams", ...row }));
    // The bytes of the event a stream of this mode got: the floor run sends the same.
    row.sample = sample;
    return row;
  } finally {
    await readers.close();
  }
}

async function runs(label, server, flags, seeded) {
  const versions = await fetch(`${server.url}/api/v2/prompts/${seeded.promptId}/versions`, {
    headers: { "x-api-key": seeded.key },
  }).then(async (r) => (await r.json()).data.versions.map((v) => v.version));
  // Production is the first version (seed.js publishes it); each publish then moves it to the other one.
  const first = await fetch(`${server.url}/api/v2/prompts/${seeded.promptId}`, {
    headers: { "x-api-key": seeded.key },
  });
  const state = { versions, current: (await first.json()).data.version };
  const rows = [];
  for (const mode of MODES) rows.push(await watch(label, flags, server, seeded, state, mode));
  return rows;
}

/** The shebang's flags, then each of OLD_SPACES in place of its old space. */
const flagSets = () => [
  { flags: "binary's", nodeFlags: undefined },
  ...OLD_SPACES.map((mb) => ({
    flags: `--max-old-space-size=${mb}`,
    nodeFlags: [...BIN_NODE_FLAGS.filter((f) => !f.startsWith("--max-old-space-size=")), `--max-old-space-size=${mb}`],
  })),
];

/** Every run on one database: a fresh server for each set of flags (`url` is seeded once). */
async function onDatabase(label, url) {
  const seeded = await seed(url, { prompts: 1, versions: 2 });
  const rows = [];
  for (const { flags, nodeFlags } of flagSets()) {
    const server = await startServer(url, serverEnv(), { nodeFlags });
    try {
      rows.push(...(await runs(label, server, flags, seeded)));
    } finally {
      await server.stop();
    }
  }
  return rows;
}

export async function sqliteStreams() {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-streams-"));
  try {
    return await onDatabase("SQLite", join(dir, "streams.sqlite"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `databaseUrl`: a fresh PostgreSQL database of the caller's. */
export const postgresStreams = (databaseUrl) => onDatabase("PostgreSQL", databaseUrl);
