// The floor of bench/streams-floor.js: a bare node:net server that answers every GET with the head of an event
// stream and `ready`, then, told to publish, writes one shared Buffer (the event's bytes as one HTTP/1.1 chunk) to
// every socket in one loop, as the hub does. No routing, no database, no JSON: what is left is what the machine's
// kernel and Node's socket writes cost, which no server written in Node can go below on this machine.
import { createServer } from "node:net";

const now = () => performance.timeOrigin + performance.now();
const HEAD = Buffer.from(
  "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-store\r\n" +
    "transfer-encoding: chunked\r\n\r\n",
);
const chunk = (text) => Buffer.concat([Buffer.from(`${text.length.toString(16)}\r\n`), text, Buffer.from("\r\n")]);
const READY = chunk(Buffer.from('retry: 1000\n\nid: 0\nevent: ready\ndata: {"last_event_id":0}\n\n'));

const sockets = new Set();
const server = createServer((socket) => {
  socket.setNoDelay(true);
  socket.on("error", () => {});
  socket.on("close", () => sockets.delete(socket));
  let request = "";
  const onData = (bytes) => {
    request += bytes.toString("latin1");
    if (!request.includes("\r\n\r\n")) return;
    socket.off("data", onData);
    socket.write(HEAD);
    socket.write(READY);
    sockets.add(socket);
  };
  socket.on("data", onData);
});

process.on("message", (message) => {
  if (message.type === "publish") {
    const bytes = chunk(Buffer.from(message.event, "latin1"));
    const at = now();
    for (const socket of sockets) socket.write(bytes);
    process.send({ type: "published", at, loopMs: now() - at, streams: sockets.size });
  } else if (message.type === "close") {
    for (const socket of sockets) socket.destroy();
    process.exit(0);
  }
});
process.on("disconnect", () => process.exit(0));
server.listen(0, "127.0.0.1", () => process.send({ type: "started", port: server.address().port }));
