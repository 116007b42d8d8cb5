/**
 * The floor under bench/streams.js's figures: the same readers, processes and source addresses, reading from a
 * bare node:net server (bench/streams-floor-server.js) that writes the very bytes the real server sent for a
 * publish to every stream in one loop. Each receipt is timed from the moment that loop began, so the figures are
 * what the kernel's loopback delivery and Node's socket writes alone cost this machine at STREAMS streams: on a
 * 2-core machine that shares its cores with the readers, no server written in Node answers below them.
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startWorkerProcess } from "./lib/worker-process.js";
import { PUBLISHES, percentile, round, STREAMS, startReaders } from "./streams.js";

const SERVER = fileURLToPath(new URL("./streams-floor-server.js", import.meta.url));

/** One floor run in `mode`, sending `event` (the real server's bytes for a publish in that mode) PUBLISHES times. */
export async function floorStreams(mode, event) {
  const version = /"version":"([^"]+)"/.exec(event)?.[1];
  if (version === undefined) throw new Error(`the ${mode} event names no version: ${event.slice(0, 200)}`);
  const server = startWorkerProcess(SERVER, {}, "floor server", 60_000);
  const { port } = await server.started;
  const readers = startReaders({
    url: `http://127.0.0.1:${port}`,
    key: "none",
    includeRead: false,
    what: `floor ${mode}`,
  });
  try {
    await readers.started;
    await readers.open();
    await new Promise((r) => setTimeout(r, 2000));
    const latencies = [];
    const loops = [];
    for (let n = 1; n <= PUBLISHES; n++) {
      const seen = await readers.publish(version, async () => {
        const { at, loopMs, streams } = await server.ask({ type: "publish", event }, "published");
        if (streams !== STREAMS) throw new Error(`the floor server held ${streams} streams, not ${STREAMS}`);
        loops.push(loopMs);
        return at;
      });
      latencies.push(...seen.latencies);
      await new Promise((r) => setTimeout(r, 200));
    }
    latencies.sort((a, b) => a - b);
    loops.sort((a, b) => a - b);
    const row = {
      mode,
      streams: STREAMS,
      publishes: PUBLISHES,
      eventBytes: Buffer.byteLength(event, "latin1"),
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1]),
      loopMedianMs: round(percentile(loops, 50)),
      load: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
    };
    console.log(JSON.stringify({ bench: "streams floor", ...row }));
    return row;
  } finally {
    await readers.close();
    await server.close();
  }
}
