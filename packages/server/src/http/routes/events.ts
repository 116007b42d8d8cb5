import { Socket } from "node:net";
import { eventsQuery } from "@promptstore/core/schemas";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { type EventHub, STREAM_CAP_RETRY_SECONDS } from "../../service/events/event-hub.js";
import { callerOf } from "../guards/auth.js";
import { keepStreamOpen } from "../guards/connection-limits.js";
import { markStream } from "../telemetry/metrics.js";
import { parseInput } from "../validate.js";

/**
 * A client that lets this much pile up unread is dropped; it reconnects and replays from its last id. It is
 * measured before an event is written, so one event larger than this (a big prompt's read) still goes out.
 */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** How soon a dropped client reconnects (the SSE `retry` field). */
const RETRY_MS = 1000;
const STREAM_TYPE = "text/event-stream; charset=utf-8";

/** Each shared text, framed as one HTTP/1.1 chunk, kept as long as the hub keeps the text. */
const chunks = new WeakMap<Buffer, Buffer>();

/**
 * The bytes ServerResponse would send for `text` on a chunked response (size line, text, CRLF), as one Buffer
 * made once per text however many streams it goes to: the hub hands every stream of a kind the same Buffer
 * (a batch of events, the heartbeat). Written straight to the socket, a stream then costs one write of
 * shared bytes; through ServerResponse each stream cost three writes gathered into a writev, with the
 * arrays, callbacks and tick that go with them: at 10 000 streams the garbage alone kept the collector
 * busy through every publish (bench/results.md, "10 000 event streams").
 */
function chunkOf(text: Buffer): Buffer {
  let chunk = chunks.get(text);
  if (chunk === undefined) {
    chunk = Buffer.concat([Buffer.from(`${text.length.toString(16)}\r\n`), text, Buffer.from("\r\n")]);
    chunks.set(text, chunk);
  }
  return chunk;
}

/** `GET /api/v2/events`: the key's project's change events as Server-Sent Events (docs/events.md). */
/**
 * `onStreamEnd` is told when a stream ends: the response was hijacked, so Fastify's onResponse hooks (the
 * metrics' request count) never see it.
 */
export function registerEventRoutes(
  app: FastifyInstance,
  hub: EventHub,
  onStreamEnd: (request: FastifyRequest) => void = () => {},
): void {
  app.get("/api/v2/events", { config: { auth: true } }, (request, reply) => {
    const caller = callerOf(request);
    const query = parseInput(eventsQuery, request.query, "query");
    // HEAD runs this handler too (Fastify's automatic HEAD route): a hijacked stream would write nothing
    // (no body for HEAD) and hold the connection and a stream slot forever. Its answer is the headers alone.
    if (request.method === "HEAD") {
      return reply.code(200).type(STREAM_TYPE).send();
    }
    // Before the response starts, so that a refusal is an ordinary 429 envelope.
    let release: () => void;
    try {
      release = hub.reserve(caller);
    } catch (error) {
      reply.header("retry-after", STREAM_CAP_RETRY_SECONDS);
      throw error;
    }
    const header = request.headers["last-event-id"];
    const lastEventId = Array.isArray(header) ? header[0] : header;
    const key = request.headers["x-api-key"] as string;

    reply.hijack();
    const raw = reply.raw;
    // The common headers (request id, rate limit, no-store) were set on the reply by the hooks.
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string | number | string[]>),
      "content-type": STREAM_TYPE,
      "cache-control": "no-store",
      // nginx buffers responses unless told not to; a buffered event arrives late.
      "x-accel-buffering": "no",
    });
    raw.write(`retry: ${RETRY_MS}\n\n`);
    const socket = request.raw.socket;
    keepStreamOpen(socket);
    markStream(request.raw);
    // Chunks go straight to the socket only when the response is chunked (HTTP/1.1; an HTTP/1.0 client gets
    // the bare text and the end of the connection ends the body) on a real socket (not inject()). The head
    // and `retry` went through ServerResponse above, so these bytes follow them; its end writes the last chunk.
    const direct = raw.chunkedEncoding && socket instanceof Socket;

    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      detach();
      release();
      raw.end();
      onStreamEnd(request);
    };
    const detach = hub.open(
      caller,
      key,
      lastEventId,
      {
        write: (text) => {
          // writableLength counts what waits in the socket too, however it was written.
          if (ended || raw.destroyed || raw.writableLength > MAX_BUFFERED_BYTES) return false;
          if (text.length === 0) return true;
          // Past ServerResponse only while it holds nothing of its own: the answer to a pipelined request waits,
          // buffered, for the one before it, and bytes sent around it would overtake its head.
          if (
            direct &&
            typeof text !== "string" &&
            raw.socket === socket &&
            raw.writableLength === socket.writableLength
          )
            socket.write(chunkOf(text));
          else raw.write(text);
          return true;
        },
        end,
      },
      { withReads: query.include === "read" },
    );
    raw.on("close", end);
  });
}
