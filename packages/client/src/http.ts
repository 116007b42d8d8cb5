import { PromptstoreError, PromptstoreNetworkError, PromptstoreTimeoutError } from "./errors.js";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  retries: number;
  /** The first backoff; each retry doubles it, with full jitter. Default 200 ms. */
  baseDelayMs: number;
  /** No backoff is longer than this. Default 5 000 ms. */
  maxDelayMs: number;
  /** The longest a 429 (or 503) is waited out, whatever `Retry-After` says. Default 60 000 ms. */
  maxRetryAfterMs: number;
}

export interface HttpSettings extends RetryOptions {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  timeoutMs: number;
  headers: Record<string, string>;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  /** A GET may be sent again after a 5xx, a timeout or a broken connection; a write only when it was refused unsent. */
  idempotent: boolean;
  /** Statuses that are answers, not failures (304). */
  accept?: number[];
  /** A body sent as it is (a file to import) with its content type, instead of `body` as JSON. */
  raw?: { data: RawBody; type: string } | undefined;
}

/** A body sent as it is: it can be sent again, so a refused request is retried like any other. */
export type RawBody = string | Blob | ArrayBuffer | Uint8Array;

export interface HttpResult<T> {
  status: number;
  data: T | undefined;
  headers: Headers;
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Full jitter: a random wait between 0 and the exponential step, so that clients do not retry in step. */
export function backoff(attempt: number, baseMs: number, maxMs: number): number {
  return Math.random() * Math.min(maxMs, baseMs * 2 ** attempt);
}

/** Seconds to wait from `Retry-After` (seconds or an HTTP date), else `X-RateLimit-Reset` (seconds). */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, (date - Date.now()) / 1000);
  }
  const reset = Number(headers.get("x-ratelimit-reset") ?? Number.NaN);
  return Number.isFinite(reset) && reset >= 0 ? reset : undefined;
}

/** Errors a fetch raises when the connection was never made: nothing was sent, so any request may be resent. */
function refusedUnsent(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === "string" ? cause.code : "";
  return ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"].includes(code);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.message === "string" && cause.message !== "") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

export function buildUrl(baseUrl: string, path: string, query?: RequestOptions["query"]): string {
  let url = baseUrl.replace(/\/+$/, "") + path;
  if (query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
    const search = params.toString();
    if (search !== "") url += `?${search}`;
  }
  return url;
}

/** The headers of every request: the client's own, then the key, then the request's (which may replace `accept`). */
export function headersFor(settings: HttpSettings, extra?: Record<string, string>): Record<string, string> {
  return { accept: "application/json", ...settings.headers, "x-api-key": settings.apiKey, ...extra };
}

type Envelope = { success?: unknown; data?: unknown; error?: unknown; code?: unknown };

function parseEnvelope(text: string): Envelope | undefined {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A failed answer as the error it stands for: the failure envelope's message and code, else the status and
 * the start of the body; on 429 and 503, the wait the service asked for.
 */
export function answerError(
  res: Response,
  text: string,
  label: string,
  envelope = parseEnvelope(text),
): PromptstoreError {
  const message =
    typeof envelope?.error === "string"
      ? envelope.error
      : `${label}: HTTP ${res.status}${text ? ` ${text.slice(0, 200)}` : ""}`;
  return new PromptstoreError(message, {
    status: res.status,
    code: typeof envelope?.code === "string" ? envelope.code : undefined,
    requestId: res.headers.get("x-request-id") ?? undefined,
    retryAfter: res.status === 429 || res.status === 503 ? retryAfterSeconds(res.headers) : undefined,
    request: label,
  });
}

interface AttemptOutcome<T> {
  result?: HttpResult<T>;
  error: PromptstoreError | undefined;
  /** Whether sending again may succeed and is safe. */
  retry: boolean;
  /** The wait the service asked for, in ms. */
  waitMs?: number | undefined;
}

/**
 * One request with the client's policy: a timeout per attempt (AbortController), and retries with
 * exponential backoff and full jitter for 5xx answers, timeouts and broken connections of idempotent
 * requests; a 429 (and a 503 with `Retry-After`) is waited out for the seconds the service names, bounded by
 * `maxRetryAfterMs`, for any request, since a refused request was not carried out.
 */
export async function request<T>(
  settings: HttpSettings,
  method: string,
  path: string,
  options: RequestOptions,
): Promise<HttpResult<T>> {
  const url = buildUrl(settings.baseUrl, path, options.query);
  const label = `${method} ${path}`;
  const headers = headersFor(settings, options.headers);
  let body: BodyInit | undefined;
  if (options.raw !== undefined) {
    body = options.raw.data as BodyInit;
    headers["content-type"] = options.raw.type;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  for (let attempt = 0; ; attempt++) {
    const outcome = await attemptOnce<T>(settings, method, url, label, headers, body, options);
    if (!outcome.error) return outcome.result as HttpResult<T>;
    if (!outcome.retry || attempt >= settings.retries) throw outcome.error;
    const wait =
      outcome.waitMs !== undefined
        ? Math.min(outcome.waitMs, settings.maxRetryAfterMs)
        : backoff(attempt, settings.baseDelayMs, settings.maxDelayMs);
    await sleep(wait, options.signal);
  }
}

async function attemptOnce<T>(
  settings: HttpSettings,
  method: string,
  url: string,
  label: string,
  headers: Record<string, string>,
  body: BodyInit | undefined,
  options: RequestOptions,
): Promise<AttemptOutcome<T>> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, settings.timeoutMs);
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    let res: Response;
    let text: string;
    try {
      res = await settings.fetch(url, { method, headers, body, signal: controller.signal });
      text = res.status === 304 ? "" : await res.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (timedOut) return { error: new PromptstoreTimeoutError(settings.timeoutMs, label), retry: options.idempotent };
      return {
        error: new PromptstoreNetworkError(`${label}: ${describe(error)}`, { request: label, cause: error }),
        retry: options.idempotent || refusedUnsent(error),
      };
    }
    const envelope = parseEnvelope(text);
    if (res.ok || options.accept?.includes(res.status)) {
      if (res.ok && (envelope === undefined || envelope.success !== true)) {
        return {
          error: new PromptstoreError(`${label}: the answer is not a success envelope`, {
            status: res.status,
            requestId: res.headers.get("x-request-id") ?? undefined,
            request: label,
          }),
          retry: false,
        };
      }
      return {
        result: { status: res.status, data: envelope?.data as T | undefined, headers: res.headers },
        error: undefined,
        retry: false,
      };
    }
    const error = answerError(res, text, label, envelope);
    const retryAfter = error.retryAfter;
    if (res.status === 429) return { error, retry: true, waitMs: (retryAfter ?? 1) * 1000 };
    if (res.status >= 500 && options.idempotent) {
      return { error, retry: true, waitMs: retryAfter === undefined ? undefined : retryAfter * 1000 };
    }
    return { error, retry: false };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}
