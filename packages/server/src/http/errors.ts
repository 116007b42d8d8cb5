import type { FastifyError, FastifyInstance } from "fastify";
import { AppError } from "../core/errors.js";
import { LIMITS } from "../core/schemas.js";
import { failure } from "./envelope.js";

/** Fastify's own errors, mapped to the statuses and messages of the contract. */
const FASTIFY_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: `body: must be at most ${LIMITS.bodyBytes} bytes` },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: "content-type: must be application/json" },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: "content-length: does not match the body" },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: "body: is not valid JSON" },
};

/** One handler maps every error to the failure envelope; nothing else writes an error response. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ err: error }, "request failed");
      return reply.code(error.status).send(failure(error.message));
    }
    const known = error.code ? FASTIFY_ERRORS[error.code] : undefined;
    if (known) return reply.code(known.status).send(failure(known.message));
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(failure(error.message));
    request.log.error({ err: error }, "request failed");
    return reply.code(500).send(failure("internal error; retry with backoff"));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(failure(`route not found: ${request.method} ${request.url.split("?")[0]}`));
  });
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** Answers 405 (with Allow) for each method a known path does not take, instead of Fastify's 404. */
export function registerMethodNotAllowed(app: FastifyInstance, paths: Map<string, Set<string>>): void {
  for (const [url, methods] of paths) {
    const allowed = new Set(methods);
    if (allowed.has("GET")) allowed.add("HEAD");
    const others = METHODS.filter((m) => !allowed.has(m));
    const allow = [...allowed].join(", ");
    app.route({
      method: others,
      url,
      handler: async (request, reply) =>
        reply
          .code(405)
          .header("allow", allow)
          .send(failure(`method not allowed: ${request.method} ${url}; allowed: ${allow}`)),
    });
  }
}
