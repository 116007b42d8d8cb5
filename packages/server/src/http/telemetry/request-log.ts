import type { FastifyInstance, FastifyServerOptions } from "fastify";
import type { Config } from "../../config.js";

/**
 * Header and field names that hold credentials, censored wherever a log line carries them (a request's
 * headers, an error's config). Nothing logs headers today; this is the net under a future `log.info(req)`.
 */
const SECRET_PATHS = [
  'req.headers["x-api-key"]',
  "req.headers.authorization",
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  "headers.authorization",
  'headers["x-api-key"]',
  "headers.cookie",
  "password",
  "*.password",
  "key",
  "*.key",
];

/**
 * pino's options for the service: one JSON line per event, with no headers and no bodies (Fastify's default
 * request serializer logs neither, and requests are logged by `logRequests` with the fields chosen there).
 */
export function loggerOptions(level: Config["LOG_LEVEL"]): Exclude<FastifyServerOptions["logger"], boolean> {
  return {
    level,
    redact: { paths: SECRET_PATHS, censor: "[redacted]" },
  };
}

/**
 * One line per answered request: its id (the `reqId` binding), method, path without the query, route
 * template, status, latency in milliseconds, and the project of the key that made it. Never a header, a
 * query or a body: those carry keys, passwords, session cookies and prompt content. Registered only when
 * `info` is on, so a quieter server pays nothing per request.
 */
export function logRequests(app: FastifyInstance): void {
  // Fastify's stand-in for `logger: false` cannot say; it logs nothing anyway.
  const log = app.log as { isLevelEnabled?: (level: string) => boolean };
  if (!log.isLevelEnabled?.("info")) return;
  app.addHook("onResponse", (request, reply, done) => {
    const path = request.url;
    const query = path.indexOf("?");
    request.log.info(
      {
        method: request.method,
        path: query < 0 ? path : path.slice(0, query),
        route: request.routeOptions.url ?? "unmatched",
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        project: request.caller?.projectId,
      },
      "request completed",
    );
    done();
  });
}
