import type { FastifyReply } from "fastify";

/**
 * Why work for an answer stopped: its client closed the connection first. Nobody receives the answer; the request
 * log and the metrics record 499, as nginx does for "client closed request".
 */
class ClientGone extends Error {
  readonly statusCode = 499;
  constructor() {
    super("the client closed the connection before its answer");
  }
}

/**
 * Aborted when the client goes before its answer is finished (a dashboard search the screen replaced with the next
 * one): work done only for that answer, a piece at a time, stops at its next piece instead of running to its end.
 */
export function untilClientGoes(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort(new ClientGone());
  });
  return controller.signal;
}
