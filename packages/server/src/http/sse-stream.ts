import type { FastifyReply, FastifyRequest } from "fastify";
import type { RunSink } from "../service/playground/run-service.js";
import { keepStreamOpen } from "./guards/connection-limits.js";
import { markStream } from "./telemetry/metrics.js";

const STREAM_TYPE = "text/event-stream; charset=utf-8";

export interface EventStream {
  sink: RunSink;
  /** Aborted when the client goes (or the stream ends): upstream work tied to it stops. */
  signal: AbortSignal;
  end(): void;
}

/**
 * Opens a Server-Sent Events answer on the raw response, for a stream whose every event is written the
 * moment it exists (no reply buffering, no compression). `send` resolves once the socket has taken the
 * event, or after a `drain` when it had not: the producer waits for a slow reader instead of piling events
 * up in memory. The client closing the connection aborts `signal`.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply): EventStream {
  reply.hijack();
  const raw = reply.raw;
  // Before the first byte: no Nagle delay on the head or any event after it.
  keepStreamOpen(request.raw.socket);
  raw.writeHead(200, {
    // The common headers (request id, rate limit, no-store, security) were set on the reply by the hooks.
    ...(reply.getHeaders() as Record<string, string | number | string[]>),
    "content-type": STREAM_TYPE,
    "cache-control": "no-store",
    // nginx buffers responses unless told not to; a buffered piece arrives late.
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();
  markStream(request.raw);

  const controller = new AbortController();
  const waiting = new Set<() => void>();
  let ended = false;
  raw.on("close", () => {
    // Before the end was written: the client left (or the connection broke).
    controller.abort();
    for (const wake of waiting) wake();
  });
  const sink: RunSink = {
    send(event, data) {
      if (ended || raw.destroyed || controller.signal.aborted) return Promise.resolve();
      const flushed = raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      if (flushed) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const wake = () => {
          waiting.delete(wake);
          raw.off("drain", wake);
          resolve();
        };
        waiting.add(wake);
        raw.once("drain", wake);
      });
    },
  };
  return {
    sink,
    signal: controller.signal,
    end() {
      if (ended) return;
      ended = true;
      if (!raw.destroyed) raw.end();
    },
  };
}
