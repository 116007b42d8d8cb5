/**
 * The one place that talks to the server: every request goes through `request`, which unwraps the
 * `{ success, data | error }` envelope, adds the CSRF header to mutations and turns failures into
 * `ApiError`, so screens never handle a raw `Response`.
 */
import { parseFieldError } from "./errors";

export class ApiError extends Error {
  /** 0 when the server could not be reached. */
  readonly status: number;
  /** The field the server named (`sections[2].title`), or null. */
  readonly field: string | null;
  /** The message without the field prefix. */
  readonly detail: string;
  /** Seconds to wait, from `Retry-After` on a 429. */
  readonly retryAfter: number | null;

  constructor(status: number, text: string, retryAfter: number | null = null) {
    super(text);
    this.name = "ApiError";
    this.status = status;
    const parsed = parseFieldError(text);
    this.field = parsed.field;
    this.detail = parsed.message;
    this.retryAfter = retryAfter;
  }
}

export const isApiError = (error: unknown): error is ApiError => error instanceof ApiError;

// The CSRF token comes with the session; it is kept here rather than read from the query cache so the
// client does not depend on React.
let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

function retryAfterSeconds(response: Response): number | null {
  const header = response.headers.get("retry-after");
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** A body sent as it is, with its own type (a dataset file: JSONL or CSV), instead of JSON. */
export interface RawBody {
  raw: Blob | string;
  type: string;
}

const isRaw = (body: unknown): body is RawBody =>
  typeof body === "object" && body !== null && "raw" in body && "type" in body;

export async function request<T>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const init: RequestInit = { method, credentials: "same-origin", headers, signal };
  if (method !== "GET") {
    if (csrfToken !== null) headers["x-csrf-token"] = csrfToken;
    if (isRaw(body)) {
      // A File or Blob is streamed from disk by the browser; the server reads it as it arrives.
      headers["content-type"] = body.type;
      init.body = body.raw;
    } else {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(body ?? {});
    }
  }
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    // Given up by whoever asked (a search replaced by the next): not a failure to show.
    if (signal?.aborted) throw error;
    throw new ApiError(0, "Could not reach the server. Check the connection and try again.");
  }
  type Envelope = { success?: boolean; data?: unknown; error?: unknown };
  let envelope: Envelope | null = null;
  try {
    envelope = (await response.json()) as Envelope;
  } catch {
    // Not JSON: a proxy's error page, or a server without the dashboard API.
  }
  if (envelope?.success === true && response.ok) return envelope.data as T;
  const text =
    typeof envelope?.error === "string"
      ? envelope.error
      : `The server answered ${response.status} ${response.statusText}`.trim();
  throw new ApiError(response.status, text, response.status === 429 ? retryAfterSeconds(response) : null);
}

/**
 * A POST answered with a stream of Server-Sent Events (a playground run): the open response, its body not
 * yet read. A refusal before the stream starts is the usual envelope, thrown as `ApiError`; `signal`
 * aborts the request, which the server takes as "stop".
 */
export async function postStream(path: string, body: unknown, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: "text/event-stream", "content-type": "application/json" };
  if (csrfToken !== null) headers["x-csrf-token"] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers,
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ApiError(0, "Could not reach the server. Check the connection and try again.");
  }
  if (response.ok && response.body && response.headers.get("content-type")?.startsWith("text/event-stream")) {
    return response;
  }
  let text = `The server answered ${response.status} ${response.statusText}`.trim();
  try {
    const envelope = (await response.json()) as { error?: unknown };
    if (typeof envelope.error === "string") text = envelope.error;
  } catch {
    // Not JSON: keep the status line.
  }
  throw new ApiError(response.status, text, response.status === 429 ? retryAfterSeconds(response) : null);
}

/** `signal`: a request whose answer nobody waits for any more is closed, and the server stops its work. */
export const get = <T>(path: string, signal?: AbortSignal) => request<T>("GET", path, undefined, signal);
export const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body);
/** A POST whose body is a file (or text) of the given type, not JSON. */
export const postRaw = <T>(path: string, body: RawBody) => request<T>("POST", path, body);
export const put = <T>(path: string, body?: unknown) => request<T>("PUT", path, body);
export const patch = <T>(path: string, body?: unknown) => request<T>("PATCH", path, body);
export const del = <T>(path: string) => request<T>("DELETE", path);

/** `encodeURIComponent` for each path segment, so ids never change the route. */
export function path(strings: TemplateStringsArray, ...values: string[]): string {
  return strings.reduce(
    (acc, part, i) => acc + part + (i < values.length ? encodeURIComponent(values[i] as string) : ""),
    "",
  );
}
