// One process of raw event-stream readers for bench/streams.js. A reader is one node:http GET /api/v2/events
// with the key, on its own connection (no agent, no keep-alive pool), from one of the loopback source addresses
// it was given; it splits the body into events at blank lines and looks only at `event:` and `data:` lines.
// For every publish the parent announces, it reports when each reader received the event naming the published
// version, as absolute times (performance.timeOrigin + now, comparable across processes).
import http from "node:http";

const { url, key, count, addresses, includeRead, openConcurrency } = JSON.parse(process.env.STREAMS_WORKER);
const now = () => performance.timeOrigin + performance.now();
const target = new URL(`${url}/api/v2/events${includeRead ? "?include=read" : ""}`);

let version = "";
let times = [];
/** Readers that have not yet received the armed publish. */
let pending = 0;
/** Set by the parent's `close`: a stream ending after it is expected. */
let closing = false;
const readers = [];

/** A stream that ends, or fails, while the parent still counts on it is reported at once: the bench fails. */
function lost(reader, why) {
  if (closing || reader.lost) return;
  reader.lost = true;
  process.send({ type: "lost", index: reader.index, address: reader.address, why });
}

function onEvent(reader, block) {
  let type = "";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) type = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (type === "ready") {
    reader.ready = true;
    reader.onReady?.();
  } else if (type === "prompt.published" && !reader.got && version !== "") {
    // The version is in the event's fixed fields, ahead of any `read`: no need to parse the whole payload.
    if (JSON.parse(data).version !== version) return;
    reader.got = true;
    times.push(now());
    if (--pending === 0) process.send({ type: "seen", times });
  }
}

function open(index) {
  const address = addresses[index % addresses.length];
  const reader = { index, address, ready: false, got: false, lost: false, req: undefined, onReady: undefined };
  readers.push(reader);
  return new Promise((resolve) => {
    reader.onReady = () => {
      reader.onReady = undefined;
      resolve();
    };
    const req = http.get(target, { agent: false, localAddress: address, headers: { "x-api-key": key } }, (res) => {
      if (res.statusCode !== 200) {
        lost(reader, `answered ${res.statusCode}`);
        res.resume();
        return resolve();
      }
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk) => {
        buffer += chunk;
        let end = buffer.indexOf("\n\n");
        while (end !== -1) {
          onEvent(reader, buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
        }
      });
      res.on("end", () => lost(reader, "the server ended the stream"));
      res.on("error", (error) => lost(reader, error.message));
    });
    req.on("error", (error) => {
      lost(reader, error.message);
      resolve();
    });
    req.on("close", () => {
      lost(reader, "the connection closed");
      resolve();
    });
    reader.req = req;
  });
}

/** Opens every reader, `openConcurrency` at a time, so the server's accept backlog is never flooded. */
async function openAll() {
  let next = 0;
  const lane = async () => {
    while (next < count) await open(next++);
  };
  await Promise.all(Array.from({ length: Math.min(openConcurrency, count) }, lane));
  return readers.filter((r) => r.ready && !r.lost).length;
}

process.on("message", async (message) => {
  if (message.type === "open") {
    const ready = await openAll();
    process.send({ type: "opened", ready });
  } else if (message.type === "arm") {
    version = message.version;
    times = [];
    pending = readers.length;
    for (const r of readers) r.got = false;
    process.send({ type: "armed" });
  } else if (message.type === "report") {
    process.send({
      type: "reported",
      received: readers.filter((r) => r.got).length,
      lost: readers.filter((r) => r.lost).length,
    });
  } else if (message.type === "close") {
    closing = true;
    for (const r of readers) r.req?.destroy();
    process.exit(0);
  }
});
// The bench went away (it failed): nothing is left to report to.
process.on("disconnect", () => process.exit(0));
process.send({ type: "started" });
