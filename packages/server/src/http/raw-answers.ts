/**
 * Answers written before (or instead of) Fastify's routing: a request Node's HTTP parser refuses, an
 * `Expect` it cannot meet, a path Fastify cannot decode, a CONNECT. Each is still the failure envelope with
 * the headers every answer carries (X-Request-Id, X-API-Version, Cache-Control: no-store), not Node's or
 * Fastify's own body.
 */
import { randomUUID } from "node:crypto";
import { type IncomingMessage, maxHeaderSize, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { failure } from "./envelope.js";
import { API_SECURITY_HEADERS, DASHBOARD_SECURITY_HEADERS } from "./guards/security-headers.js";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's request id is kept when it is safe to log, so traces join up across services; else a new one. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The headers every answer carries, for a request to `url` (the same as the onRequest hook of app.ts sets on
 * the way in; that one stays inline for the hot path).
 */
export function commonHeaders(url: string, requestId: string): Record<string, string> {
  const v1 = url.startsWith("/api/v1/");
  return {
    "x-request-id": requestId,
    "cache-control": "no-store",
    "x-api-version": v1 ? "1" : "2",
    ...(v1 ? { deprecation: "true" } : {}),
    ...(v1 || url.startsWith("/api/v2/") ? API_SECURITY_HEADERS : DASHBOARD_SECURITY_HEADERS),
  };
}

/**
 * A complete answer written straight on the socket, for when there is no request to answer through: the
 * parser refused the bytes, so the URL (and the interface version) is unknown and the connection is done.
 */
function rawAnswer(status: number, message: string): string {
  const body = JSON.stringify(failure(message));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n` +
    "content-type: application/json; charset=utf-8\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    "cache-control: no-store\r\n" +
    "x-api-version: 2\r\n" +
    "x-content-type-options: nosniff\r\n" +
    "referrer-policy: no-referrer\r\n" +
    `x-request-id: ${randomUUID()}\r\n` +
    `date: ${new Date().toUTCString()}\r\n` +
    "connection: close\r\n\r\n" +
    body
  );
}

/** What llhttp's error codes mean, in the words of a 400's message. */
const PARSE_ERRORS: Record<string, string> = {
  HPE_INVALID_METHOD: "invalid method",
  HPE_INVALID_URL: "invalid request target",
  HPE_INVALID_VERSION: "invalid HTTP version",
  HPE_PAUSED_H2_UPGRADE: "invalid HTTP version",
  HPE_INVALID_HEADER_TOKEN: "invalid header",
  HPE_INVALID_CONSTANT: "invalid header",
  HPE_CR_EXPECTED: "invalid header",
  HPE_LF_EXPECTED: "invalid header",
  HPE_INVALID_CONTENT_LENGTH: "invalid content-length",
  HPE_UNEXPECTED_CONTENT_LENGTH: "invalid content-length",
  HPE_INVALID_TRANSFER_ENCODING: "invalid transfer-encoding",
  HPE_INVALID_CHUNK_SIZE: "invalid chunked body",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "invalid chunked body",
  HPE_INVALID_EOF_STATE: "invalid chunked body",
};

export function describeClientError(error: { code?: string }): { status: number; message: string } {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, message: `request head: must be at most ${maxHeaderSize} bytes` };
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, message: "request: not received in time" };
  const reason = error.code === undefined ? undefined : PARSE_ERRORS[error.code];
  return { status: 400, message: `request: is not valid HTTP/1.1${reason ? ` (${reason})` : ""}` };
}

/**
 * Node's `clientError`: the parser refused what came on a connection. Answers in the envelope and closes.
 * If an earlier, complete request of the same connection is still being answered, its answer is let finish
 * first (Node's and Fastify's default would write over it, and the caller would lose it). If the refused
 * request is the one in flight (its head parsed, its body not), the refusal is its answer.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, log: FastifyBaseLogger): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const { status, message } = describeClientError(error);
  log.debug({ err: error, status }, "client error");
  const answer = () => endWith(socket, rawAnswer(status, message));
  // Node's own bookkeeping: the answer being written on this connection, if any.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!inFlight || inFlight.writableFinished) {
    answer();
  } else if (inFlight.req?.complete) {
    inFlight.once("finish", answer);
    inFlight.once("close", () => {
      if (!inFlight.writableFinished) socket.destroy();
    });
  } else if (!inFlight.headersSent) {
    answer();
  } else {
    socket.destroy();
  }
}

/** Writes a last answer and closes the connection once it is flushed. */
function endWith(socket: Duplex, answer: string): void {
  if (socket.writable) socket.end(answer, () => socket.destroy());
  else socket.destroy();
}

/** Node answers a bare 417 to an `Expect` other than 100-continue unless someone listens; this is the envelope. */
function answerExpectation(request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(failure("expect: only 100-continue is supported"));
  response.writeHead(417, {
    ...commonHeaders(request.url ?? "/", requestIdFor(request)),
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}

/** Node closes a CONNECT without a word unless someone listens; the service proxies nothing: 405. */
function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  endWith(socket, rawAnswer(405, "method not allowed: CONNECT"));
}

/** Fastify's errors before routing (`frameworkErrors`): a path it cannot decode, a parameter too long. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const [status, message] =
    error.code === "FST_ERR_BAD_URL"
      ? [400, "url: is not valid percent-encoded UTF-8"]
      : error.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? // maxParamLength is the whole head's size (app.ts): a parameter longer than that never arrives.
          [404, `route not found: ${request.method} ${request.url.split("?")[0]?.slice(0, 200)}`]
        : [500, "internal error; retry with backoff"];
  if (status >= 500) request.log.error({ err: error }, "request failed");
  reply.code(status).headers(commonHeaders(request.url, request.id)).send(failure(message));
}

/** Listeners on Node's server for what it would otherwise answer (or drop) on its own. */
export function registerRawAnswers(app: FastifyInstance): void {
  app.server.on("checkExpectation", answerExpectation);
  app.server.on("connect", answerConnect);
}
