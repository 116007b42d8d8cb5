// One process of watching SDK clients for bench/propagation.js: it holds `count` clients (spread over the
// given servers), and for every publish the parent announces, reports when each client's onChange and
// onEvent saw it, as absolute times (performance.timeOrigin + now, comparable across processes).
import { Promptstore } from "../dist/index.js";

const { urls, key, promptId, count, offset, ref = "production" } = JSON.parse(process.env.PROPAGATION_WORKER);
/** What a move of the held reference is announced as. */
const MOVED = ref === "production" ? "prompt.published" : "prompt.label_moved";
const now = () => performance.timeOrigin + performance.now();

let target = "";
let seen = [];
let heard = [];
let pending = 0;
const clients = Array.from({ length: count }, (_, i) => {
  let sawIt = false;
  let heardIt = false;
  const client = new Promptstore({
    baseUrl: urls[(offset + i) % urls.length],
    apiKey: key,
    onEvent: (event) => {
      if (event.type === MOVED && event.version === target && !heardIt) {
        heardIt = true;
        heard.push(now());
      }
    },
    onChange: (change) => {
      if (change.version !== target || sawIt) return;
      sawIt = true;
      seen.push(now());
      // The event's own hook runs right after the change it carried: report once it has.
      if (--pending === 0) setImmediate(() => process.send({ type: "seen", seen, heard }));
    },
  });
  client.reset = () => {
    sawIt = false;
    heardIt = false;
  };
  return client;
});

process.on("message", async (message) => {
  if (message.type === "hold") {
    target = message.version;
    await Promise.all(clients.map((c) => c.get(promptId, { version: ref })));
    const live = await Promise.all(clients.map((c) => c.ready(60_000)));
    process.send({ type: "held", down: live.filter((l) => !l).length });
  } else if (message.type === "arm") {
    target = message.version;
    seen = [];
    heard = [];
    pending = count;
    for (const c of clients) c.reset();
    process.send({ type: "armed" });
  } else if (message.type === "check") {
    let stale = 0;
    for (const c of clients) if ((await c.get(promptId, { version: ref })).version !== target) stale++;
    process.send({ type: "checked", stale });
  } else if (message.type === "close") {
    for (const c of clients) c.close();
    process.exit(0);
  }
});
process.send({ type: "started" });
