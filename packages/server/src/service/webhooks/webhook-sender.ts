/**
 * One attempt of one delivery: a signed POST (Standard Webhooks), to the address the guarded lookup checked,
 * with an overall time limit, no redirects followed, and at most a little of the answer read.
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Webhook } from "standardwebhooks";
import { VERSION } from "../../version.js";
import {
  guardedLookup,
  literalAddress,
  RefusedAddressError,
  type Resolver,
  refusalMessage,
  refusedAddress,
} from "../webhook-address.js";

/** How much of an answer's body is read (and kept, for a failure's message). */
export const RESPONSE_BYTES = 1024;
const ERROR_SNIPPET = 200;

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  resolver?: Resolver;
  /** Ends the attempt at once (the instance is stopping); it then counts as not made. */
  signal?: AbortSignal;
  /**
   * Read a 2xx answer's body, up to this many bytes, and give it in `body` (an evaluation's webhook check
   * reads its verdict there); a longer one is a failed attempt. Without it, at most RESPONSE_BYTES are read
   * and none is given.
   */
  answerBytes?: number;
}

export interface Attempt {
  /** 2xx: delivered. */
  ok: boolean;
  /** The answer's HTTP status; null when there was none. */
  status: number | null;
  /** Why it failed, for the delivery's `last_error`; null when delivered. */
  error: string | null;
  /** The address is not allowed: trying again would be refused again. */
  refused?: true;
  /** The 2xx answer's body, when `answerBytes` asked for it. */
  body?: string;
}

export interface Message {
  /** `msg_<event id>`: the same for every attempt, so receivers can drop duplicates. */
  id: string;
  /** The JSON body, exactly as signed. */
  payload: string;
}

export function sign(secret: string, message: Message, at: Date): Record<string, string> {
  return {
    "webhook-id": message.id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(message.id, at, message.payload),
  };
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
};

function describeError(error: NodeJS.ErrnoException): string {
  if (error.code === "EWEBHOOKREFUSED") return error.message;
  const known = error.code ? NETWORK_ERRORS[error.code] : undefined;
  if (known) return `${known} (${error.code})`;
  // TLS and protocol failures: their own words say what is wrong (certificate, handshake).
  return `${error.message}${error.code ? ` (${error.code})` : ""}`.slice(0, 300);
}

export function sendWebhook(
  target: { url: string; secret: string },
  message: Message,
  options: SendOptions,
): Promise<Attempt> {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return Promise.resolve({ ok: false, status: null, error: "url: is not a valid URL" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.resolve({ ok: false, status: null, error: "url: must be an http:// or https:// URL" });
  }
  // A literal address never reaches the lookup: it is checked here.
  const literal = literalAddress(url.hostname);
  if (literal !== null && !options.allowPrivate) {
    const what = refusedAddress(literal);
    if (what !== null) {
      return Promise.resolve({ ok: false, status: null, error: refusalMessage(literal, literal, what), refused: true });
    }
  }
  const at = new Date();
  const body = Buffer.from(message.payload);
  const headers = {
    "content-type": "application/json",
    "content-length": String(body.length),
    "user-agent": `Promptstore-Webhooks/${VERSION}`,
    ...sign(target.secret, message, at),
  };
  const transport = url.protocol === "https:" ? https : http;

  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(attempt);
    };
    const request = transport.request(url, {
      method: "POST",
      headers,
      // A new connection per attempt: a pooled one could have been opened to an address checked long ago.
      agent: false,
      lookup: guardedLookup(options.allowPrivate, options.resolver) as unknown as LookupFunction,
    });
    timer = setTimeout(
      () => finish({ ok: false, status: null, error: `timed out after ${options.timeoutMs} ms` }),
      options.timeoutMs,
    );
    if (options.signal) {
      const abort = () => finish({ ok: false, status: null, error: "aborted: the server is stopping" });
      if (options.signal.aborted) abort();
      else options.signal.addEventListener("abort", abort, { once: true });
    }
    request.on("error", (error: NodeJS.ErrnoException) =>
      finish({
        ok: false,
        status: null,
        error: describeError(error),
        ...(error instanceof RefusedAddressError ? { refused: true as const } : {}),
      }),
    );
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      // A check's verdict is read whole (or refused when too large); otherwise only the start, for a message.
      const answer = ok && options.answerBytes !== undefined;
      const limit = answer ? (options.answerBytes as number) : RESPONSE_BYTES;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        if (ok) {
          return finish({
            ok: true,
            status,
            error: null,
            ...(answer ? { body: Buffer.concat(chunks).toString("utf8") } : {}),
          });
        }
        const text = Buffer.concat(chunks).toString("utf8").replace(/\s+/g, " ").trim().slice(0, ERROR_SNIPPET);
        const redirect = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
        finish({ ok: false, status, error: `HTTP ${status}${redirect}${text ? `: ${text}` : ""}` });
      };
      response.on("data", (chunk: Buffer) => {
        if (size < limit) chunks.push(chunk.subarray(0, limit - size));
        size += chunk.length;
        if (answer) {
          if (size > limit) finish({ ok: false, status, error: `the answer is larger than ${limit} bytes` });
          return;
        }
        // Enough: the rest of a large answer is never read.
        if (size >= limit) done();
      });
      response.on("end", done);
      response.on("error", () =>
        answer ? finish({ ok: false, status, error: "the answer was cut before its end" }) : done(),
      );
    });
    request.end(body);
  });
}
