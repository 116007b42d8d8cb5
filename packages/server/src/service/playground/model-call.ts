/**
 * One call to an OpenAI-compatible chat-completions API, streamed: the answer is read piece by piece as it
 * arrives and handed on at once (nothing is collected before it is passed on), and the next piece is read
 * only when the one before has been taken (`onPiece` resolves), so a slow reader slows the provider down
 * instead of filling the server's memory. The call follows the webhook address policy (every address a host
 * name resolves to is checked, and the connection goes to a checked one), and ends on the caller's signal.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AssistantMessage, Usage } from "@promptstore/core/playground";
import { ALLOW_PRIVATE_HINT, guardedLookup, RefusedAddressError } from "../webhook-address.js";

export const MODEL_ALLOW_PRIVATE_HINT = "set PROMPTSTORE_MODEL_ALLOW_PRIVATE=true to allow private networks";

export type ProviderErrorCode =
  | "provider_unauthorized"
  | "model_not_found"
  | "provider_rate_limited"
  | "provider_error"
  | "provider_timeout"
  | "provider_answer_too_large"
  | "provider_stream_broken"
  | "provider_unreachable";

/** A failure of the provider, told to the user as an SSE `error` event (docs/playground.md). */
export class ProviderError extends Error {
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly status: number | null = null,
    /** What the provider's `Retry-After` asked for, in milliseconds (a 429 or 503), when it said. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** The longest `Retry-After` obeyed: a provider asking for more is waited on this long, then asked again. */
export const MAX_RETRY_AFTER_MS = 600_000;

/** `Retry-After` (RFC 9110 10.2.3: seconds, or an HTTP date) in milliseconds, capped; null when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, nowMs = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === "") return null;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    ms = at - nowMs;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** Why the call ended without an answer because the caller stopped it: not a provider failure. */
export class RunStopped extends Error {}

export interface ModelRequest {
  baseUrl: string;
  apiKey: string | null;
  /** The chat-completions body, without `stream` and `stream_options`, which the call sets. */
  body: Record<string, unknown>;
}

export type Piece =
  | { kind: "content"; content: string }
  | { kind: "tool_call"; index: number; id?: string; name?: string; arguments: string };

export interface ModelAnswer {
  message: AssistantMessage;
  finishReason: string | null;
  usage: Usage | null;
  /** From the call to the first piece, or null when none came. */
  ttftMs: number | null;
  totalMs: number;
}

export interface CallOptions {
  allowPrivate: boolean;
  /** The idle limit: no answer head, or nothing on the stream, for this long ends the call. */
  timeoutMs: number;
  /** The whole call's limit, however lively the stream: a provider that drips forever is ended by it. */
  totalTimeoutMs: number;
  /**
   * The most of an answer kept: its content and its tool calls' arguments together, in UTF-8 bytes. A line
   * of the stream not yet ended may hold this much and 64 KiB of framing besides.
   */
  maxAnswerBytes: number;
  signal: AbortSignal;
}

/** Room for a stream line's JSON framing around the answer's own bytes. */
const LINE_FRAMING_BYTES = 64 * 1024;

/**
 * Connections to providers are kept alive between calls: a new TCP (and TLS) connection per run would add
 * its handshake to every run's time to first token. A stopped or failed call destroys its socket, so only
 * a connection whose answer was read to the end goes back to the pool.
 */
const AGENTS = {
  http: new HttpAgent({ keepAlive: true, maxFreeSockets: 16 }),
  https: new HttpsAgent({ keepAlive: true, maxFreeSockets: 16 }),
};

/** The most tool calls one answer may hold: an index past it is a broken stream, not an array to grow. */
const MAX_TOOL_CALLS = 128;

/** The most of an error answer read (its message is what matters); the rest is dropped. */
const MAX_ERROR_BODY = 64 * 1024;

function endpointOf(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url;
}

/** The provider's own words from an error body (`{ error: { message, code } }`), bounded, the key removed. */
function providerWords(text: string, apiKey: string | null): { message: string; code: string | null } {
  let message = text.trim().slice(0, 500);
  let code: string | null = null;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string; message?: unknown };
    const error = parsed.error;
    if (typeof error === "object" && error !== null) {
      if (typeof error.message === "string") message = error.message.slice(0, 500);
      if (typeof error.code === "string") code = error.code;
    } else if (typeof error === "string") {
      message = error.slice(0, 500);
    } else if (typeof parsed.message === "string") {
      message = parsed.message.slice(0, 500);
    }
  } catch {
    // not JSON: its first words stand
  }
  if (apiKey) message = message.split(apiKey).join("[the connection's key]");
  return { message, code };
}

function statusError(
  status: number,
  body: string,
  apiKey: string | null,
  model: string,
  retryAfter: number | null,
): ProviderError {
  const { message, code } = providerWords(body, apiKey);
  const said = code ? `${code}: ` : "";
  if (status === 401 || status === 403) {
    // The provider's text for a refused key quotes part of the key; it is not passed on.
    return new ProviderError(
      "provider_unauthorized",
      `provider: the API key was refused (${status}${code ? ` ${code}` : ""}); check the connection's key`,
      status,
    );
  }
  if (status === 404) {
    return new ProviderError(
      "model_not_found",
      `provider: model ${model} not found (404 ${said}${message}); check the model name and the connection's base URL`,
      status,
    );
  }
  if (status === 429) {
    return new ProviderError(
      "provider_rate_limited",
      `provider: rate limited (429 ${said}${message})`,
      status,
      retryAfter,
    );
  }
  return new ProviderError(
    "provider_error",
    `provider: answered ${status} (${said}${message})`,
    status,
    status === 503 ? retryAfter : null,
  );
}

/** The start of an error answer: reading stops at MAX_ERROR_BODY (the caller's abort then ends the socket). */
async function readSome(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= MAX_ERROR_BODY) break;
  }
  return Buffer.concat(chunks).toString("utf8").slice(0, MAX_ERROR_BODY);
}

interface ToolCallParts {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Sends the request and streams the answer; resolves with the whole answer once the provider sent
 * `data: [DONE]`, rejects with a ProviderError (or RunStopped when the signal ended it).
 */
export async function callModel(
  request: ModelRequest,
  options: CallOptions,
  onPiece: (piece: Piece) => void | Promise<void>,
): Promise<ModelAnswer> {
  const started = performance.now();
  const url = endpointOf(request.baseUrl);
  const model = String(request.body.model ?? "");
  const payload = JSON.stringify({ ...request.body, stream: true, stream_options: { include_usage: true } });
  const headers: Record<string, string | number> = {
    "content-type": "application/json",
    accept: "text/event-stream",
    "content-length": Buffer.byteLength(payload),
  };
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`;

  const controller = new AbortController();
  let timedOut: "idle" | "total" | null = null;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut ??= "idle";
      controller.abort();
    }, options.timeoutMs);
  };
  let totalTimer: NodeJS.Timeout | undefined;
  const stop = () => controller.abort();
  if (options.signal.aborted) throw new RunStopped("stopped");
  options.signal.addEventListener("abort", stop, { once: true });
  const failure = (error: unknown): Error => {
    if (options.signal.aborted) return new RunStopped("stopped");
    if (timedOut === "idle") {
      return new ProviderError(
        "provider_timeout",
        `provider: no answer within ${Math.round(options.timeoutMs / 1000)} s (PROMPTSTORE_MODEL_TIMEOUT_SECONDS)`,
      );
    }
    if (timedOut === "total") {
      return new ProviderError(
        "provider_timeout",
        `provider: the answer did not end within ${Math.round(options.totalTimeoutMs / 1000)} s (PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS)`,
      );
    }
    if (error instanceof ProviderError) return error;
    if (error instanceof RefusedAddressError) {
      return new ProviderError(
        "provider_unreachable",
        error.message.replace(ALLOW_PRIVATE_HINT, MODEL_ALLOW_PRIVATE_HINT),
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    return new ProviderError(
      "provider_unreachable",
      `provider: could not reach ${url.host}${code ? ` (${code})` : ""}: ${(error as Error).message}`,
    );
  };

  let streaming = false;
  let completed = false;
  try {
    totalTimer = setTimeout(() => {
      timedOut ??= "total";
      controller.abort();
    }, options.totalTimeoutMs);
    arm();
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const outgoing = send(url, {
        method: "POST",
        headers,
        signal: controller.signal,
        lookup: guardedLookup(options.allowPrivate) as never,
        agent: url.protocol === "https:" ? AGENTS.https : AGENTS.http,
      });
      outgoing.on("response", resolve);
      outgoing.on("error", reject);
      outgoing.end(payload);
    });
    arm();
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const retryAfter = retryAfterMs(response.headers["retry-after"]);
      throw statusError(status, await readSome(response), request.apiKey, model, retryAfter);
    }

    let content: string | null = null;
    const calls: ToolCallParts[] = [];
    let finishReason: string | null = null;
    let usage: Usage | null = null;
    let ttftMs: number | null = null;
    let done = false;
    let answerBytes = 0;
    const tooLarge = (what: string) =>
      new ProviderError(
        "provider_answer_too_large",
        `provider: ${what} is larger than ${options.maxAnswerBytes} bytes (PROMPTSTORE_MODEL_MAX_ANSWER_BYTES)`,
      );
    const count = (text: string) => {
      answerBytes += Buffer.byteLength(text, "utf8");
      if (answerBytes > options.maxAnswerBytes) throw tooLarge("the answer");
    };
    const firstPiece = () => {
      if (ttftMs === null) ttftMs = Math.round(performance.now() - started);
    };

    const handleData = async (data: string) => {
      if (data === "[DONE]") {
        done = true;
        return;
      }
      let chunk: {
        choices?: { delta?: Record<string, any>; finish_reason?: string | null }[] | null;
        usage?: Usage | null;
        error?: unknown;
      };
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ProviderError("provider_stream_broken", "provider: the stream sent something that is not JSON");
      }
      if (chunk.error !== undefined) {
        const { message } = providerWords(JSON.stringify(chunk), request.apiKey);
        throw new ProviderError("provider_error", `provider: the stream reported an error (${message})`);
      }
      if (chunk.usage) {
        usage = {
          prompt_tokens: Number(chunk.usage.prompt_tokens ?? 0),
          completion_tokens: Number(chunk.usage.completion_tokens ?? 0),
          total_tokens: Number(chunk.usage.total_tokens ?? 0),
        };
      }
      for (const choice of chunk.choices ?? []) {
        if (choice.finish_reason) finishReason = choice.finish_reason;
        const delta = choice.delta ?? {};
        if (typeof delta.content === "string" && delta.content !== "") {
          firstPiece();
          count(delta.content);
          content = (content ?? "") + delta.content;
          await onPiece({ kind: "content", content: delta.content });
        }
        for (const call of (delta.tool_calls as any[] | undefined) ?? []) {
          firstPiece();
          const index = Number(call.index ?? 0);
          const parts = calls[index] ?? { id: "", name: "", arguments: "" };
          calls[index] = parts;
          if (!Number.isInteger(index) || index < 0 || index >= MAX_TOOL_CALLS) {
            throw new ProviderError(
              "provider_stream_broken",
              `provider: a tool call's index ${call.index} is not valid`,
            );
          }
          const piece: Piece = { kind: "tool_call", index, arguments: String(call.function?.arguments ?? "") };
          count(piece.arguments);
          if (typeof call.id === "string") {
            piece.id = call.id;
            parts.id = call.id;
          }
          if (typeof call.function?.name === "string") {
            piece.name = call.function.name;
            parts.name = call.function.name;
          }
          parts.arguments += piece.arguments;
          await onPiece(piece);
        }
      }
    };

    streaming = true;
    response.setEncoding("utf8");
    // Lines are cut in linear time: each piece of text is searched once, from where the last line ended, and
    // the start of a line not yet ended waits in `partial` (bounded) until its newline comes.
    const maxLine = options.maxAnswerBytes + LINE_FRAMING_BYTES;
    let partial: string[] = [];
    let partialLength = 0;
    for await (const text of response as AsyncIterable<string>) {
      arm();
      // A provider that floods is read at the pace of everything else the loop serves: one turn of the loop per
      // piece read (bench/results.md, "A hostile provider": /healthz p99 under four floods from 112 to 46 ms).
      await new Promise((resolve) => setImmediate(resolve));
      let start = 0;
      let newline = text.indexOf("\n");
      while (newline !== -1) {
        let line = text.slice(start, newline);
        if (partial.length > 0) {
          partial.push(line);
          line = partial.join("");
          partial = [];
          partialLength = 0;
        }
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line.startsWith("data:")) await handleData(line.slice(5).trimStart());
        if (done) break;
        start = newline + 1;
        newline = text.indexOf("\n", start);
      }
      if (done) break;
      if (start < text.length) {
        partial.push(start === 0 ? text : text.slice(start));
        partialLength += text.length - start;
        // A UTF-16 unit is at least one UTF-8 byte: a line this long in units is too long in bytes.
        if (partialLength > maxLine) throw tooLarge("a line of the stream");
      }
    }
    if (!done) {
      throw new ProviderError("provider_stream_broken", "provider: the stream ended before data: [DONE]");
    }
    // The rest (the end of the chunked body) is read off so that the connection can serve the next call.
    response.resume();
    completed = true;
    const message: AssistantMessage = { role: "assistant", content };
    const assembled = calls.filter(Boolean);
    if (assembled.length > 0) {
      message.tool_calls = assembled.map((c) => ({
        id: c.id,
        type: "function" as const,
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    return { message, finishReason, usage, ttftMs, totalMs: Math.round(performance.now() - started) };
  } catch (error) {
    // A socket the provider cut midway shows as "aborted"/ECONNRESET on the response: a broken stream.
    const code = (error as NodeJS.ErrnoException).code;
    if (
      streaming &&
      !options.signal.aborted &&
      timedOut === null &&
      (code === "ECONNRESET" || (error as Error).message === "aborted")
    ) {
      throw new ProviderError("provider_stream_broken", "provider: the connection was cut before the answer ended");
    }
    throw failure(error);
  } finally {
    clearTimeout(timer);
    clearTimeout(totalTimer);
    options.signal.removeEventListener("abort", stop);
    // Anything but a complete answer ends the request and destroys its socket: nothing is left half-read.
    if (!completed) controller.abort();
  }
}
