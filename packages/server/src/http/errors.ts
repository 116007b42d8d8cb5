import { AppError, type ErrorCode, notFound } from "@promptstore/core/errors";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { DatabaseUnavailable, RETRY_AFTER_SECONDS } from "../store/faults.js";
import { failure } from "./envelope.js";

/** Fastify's own errors, as the registry's codes and the contract's messages. */
const FASTIFY_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  // Its message names the configured limit, filled in per request.
  FST_ERR_CTP_BODY_TOO_LARGE: { code: "payload_too_large", message: "body: must be at most %d bytes" },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: "unsupported_media_type", message: "content-type: must be application/json" },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: "bad_request", message: "content-length: does not match the body" },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: "bad_request", message: "body: is not valid JSON" },
};

/**
 * One handler maps every error to the failure envelope; nothing else writes an error response. Whoever
 * refuses a request throws an AppError, after setting any headers the refusal carries (Allow, Retry-After).
 */
export function registerErrorHandling(
  app: FastifyInstance,
  /** Answers a request no route took, when it can (the dashboard's own paths); returns whether it did. */
  fallback?: (request: FastifyRequest, reply: FastifyReply) => boolean,
): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const known = !(error instanceof AppError) && error.code ? FASTIFY_ERRORS[error.code] : undefined;
    const appError = known
      ? new AppError(known.code, known.message.replace("%d", String(request.routeOptions.bodyLimit)))
      : error;
    if (appError instanceof AppError) {
      // Every 503 says when to come back; a database outage is logged once by the store's health, not once
      // per request it fails.
      if (appError.status === 503 && !reply.hasHeader("retry-after")) {
        reply.header("retry-after", String(RETRY_AFTER_SECONDS));
      }
      if (appError.status >= 500 && !(appError instanceof DatabaseUnavailable)) {
        request.log.error({ err: appError }, "request failed");
      }
      return reply.code(appError.status).send(failure(appError.message));
    }
    const status = (error as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(failure(appError.message));
    request.log.error({ err: error }, "request failed");
    return reply.code(500).send(failure("internal error; retry with backoff"));
  });

  app.setNotFoundHandler(async (request, reply) => {
    if (fallback?.(request, reply)) return reply;
    throw notFound(`route not found: ${request.method} ${request.url.split("?")[0]}`);
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
      handler: async (request, reply) => {
        reply.header("allow", allow);
        throw new AppError("method_not_allowed", `method not allowed: ${request.method} ${url}; allowed: ${allow}`);
      },
    });
  }
}
