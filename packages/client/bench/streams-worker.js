// One process of raw event-stream readers for bench/streams.js. A reader is one TCP connection from one of the
// loopback source addresses it was given, sending GET /api/v2/events with the key and reading the bytes that come
// back: it checks the status line, cuts the body at blank lines into events, and looks at an event's bytes only
// for the marks it waits for (`event: ready`; `event: prompt.published` with the armed version). No HTTP parser,
// no text decoding, no JSON, no stream machinery (every socket reads into the process's one buffer through
// `onread`: one callback a read, no `data` event, no Buffer allocated): the readers share the machine's cores
// with the server they measure, and the less each costs, the less the bench adds to the times it reports (in
// production the readers are other machines).
// For every publish the parent announces, it reports when each reader received the event naming the published
// version, as absolute times (performance.timeOrigin + now, comparable across processes).
import { connect } from "node:net";

const { url, key, count, addresses, includeRead, openConcurrency } = JSON.parse(process.env.STREAMS_WORKER);
const now = () => performance.timeOrigin + performance.now();
const target = new URL(`${url}/api/v2/events${includeRead ? "?include=read" : ""}`);
const head = Buffer.from(
  `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nx-api-key: ${key}\r\n\r\n`,
);
const OK = Buffer.from("HTTP/1.1 200 ");
const BLANK = Buffer.from("\n\n");
const READY = Buffer.from("event: ready\n");
const PUBLISHED = Buffer.from("event: prompt.published\n");
/** Where every socket's reads land; a read's bytes are looked at before the next read, and copied if kept. */
const READ_BUFFER = Buffer.alloc(64 * 1024);

/** The armed version as it appears in a published event's data (`"version":"…"`), or null between publishes. */
let versionMark = null;
let times = [];
let sample;
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

/** One event's bytes (chunk framing included, which the marks never span). */
function onEvent(reader, event) {
  if (!reader.ready) {
    if (event.indexOf(READY) !== -1) {
      reader.ready = true;
      reader.onReady?.();
    }
    return;
  }
  if (reader.got || versionMark === null) return;
  if (event.indexOf(PUBLISHED) === -1 || event.indexOf(versionMark) === -1) return;
  reader.got = true;
  times.push(now());
  // The event's own bytes (from its `id:` line), once a publish: the floor run sends exactly these.
  sample ??= event.subarray(event.indexOf("id: ")).toString("latin1");
  if (--pending === 0) process.send({ type: "seen", times, sample: `${sample}\n\n` });
}

function open(index) {
  const address = addresses[index % addresses.length];
  const reader = { index, address, ready: false, got: false, lost: false, socket: undefined, onReady: undefined };
  readers.push(reader);
  return new Promise((resolve) => {
    reader.onReady = () => {
      reader.onReady = undefined;
      resolve();
    };
    /** The bytes after the last blank line: the start of an event still arriving. */
    let rest = null;
    let statusChecked = false;
    const onBytes = (chunk) => {
      const bytes = rest === null ? chunk : Buffer.concat([rest, chunk]);
      if (!statusChecked) {
        if (bytes.length < OK.length) {
          rest = Buffer.from(bytes);
          return;
        }
        statusChecked = true;
        if (!bytes.subarray(0, OK.length).equals(OK)) {
          lost(reader, `answered ${bytes.subarray(0, bytes.indexOf("\r\n")).toString()}`);
          socket.destroy();
          return resolve();
        }
      }
      let start = 0;
      let end = bytes.indexOf(BLANK, start);
      while (end !== -1) {
        onEvent(reader, bytes.subarray(start, end));
        start = end + 2;
        end = bytes.indexOf(BLANK, start);
      }
      // A copy, so that a reader never keeps a whole earlier read alive for its few trailing bytes.
      rest = start === bytes.length ? null : Buffer.from(bytes.subarray(start));
    };
    const socket = connect({
      host: target.hostname,
      port: Number(target.port),
      localAddress: address,
      onread: { buffer: READ_BUFFER, callback: (n, buffer) => onBytes(buffer.subarray(0, n)) },
    });
    socket.setNoDelay(true);
    socket.write(head);
    socket.on("end", () => lost(reader, "the server ended the stream"));
    socket.on("error", (error) => {
      lost(reader, error.message);
      resolve();
    });
    socket.on("close", () => {
      lost(reader, "the connection closed");
      resolve();
    });
    reader.socket = socket;
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
    versionMark = Buffer.from(`"version":"${message.version}"`);
    times = [];
    sample = undefined;
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
    for (const r of readers) r.socket?.destroy();
    process.exit(0);
  }
});
// The bench went away (it failed): nothing is left to report to.
process.on("disconnect", () => process.exit(0));
process.send({ type: "started" });
