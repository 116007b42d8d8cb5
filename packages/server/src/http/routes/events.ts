import type { FastifyInstance } from "fastify";
import { type EventHub, STREAM_CAP_RETRY_SECONDS } from "../../service/event-hub.js";
import { scopeOf } from "../auth.js";

/** A client that lets this much pile up unread is dropped; it reconnects and replays from its last id. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** How soon a dropped client reconnects (the SSE `retry` field). */
const RETRY_MS = 1000;

/** `GET /api/v2/events`: the key's project's change events as Server-Sent Events (docs/events.md). */
export function registerEventRoutes(app: FastifyInstance, hub: EventHub): void {
  app.get("/api/v2/events", { config: { auth: true } }, (request, reply) => {
    const scope = scopeOf(request);
    // Before the response starts, so that a refusal is an ordinary 429 envelope.
    let release: () => void;
    try {
      release = hub.reserve(scope);
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
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      // nginx buffers responses unless told not to; a buffered event arrives late.
      "x-accel-buffering": "no",
    });
    raw.write(`retry: ${RETRY_MS}\n\n`);
    request.raw.socket.setNoDelay(true);
    request.raw.socket.setKeepAlive(true, 30_000);

    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      detach();
      release();
      raw.end();
    };
    const detach = hub.open(scope, key, lastEventId, {
      write: (text) => {
        if (ended || raw.destroyed) return false;
        raw.write(text);
        return raw.writableLength <= MAX_BUFFERED_BYTES;
      },
      end,
    });
    raw.on("close", end);
  });
}
