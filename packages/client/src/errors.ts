/**
 * The errors the client throws. Every failure of a request is a {@link PromptstoreError}: an answer of the
 * service carries its status, its message and request id; a request that got no answer is a
 * {@link PromptstoreNetworkError} or a {@link PromptstoreTimeoutError} (status 0).
 */

/** What the client knows about a failed request. */
export interface PromptstoreErrorDetails {
  /** HTTP status, or 0 when no answer arrived. */
  status: number;
  /** The `code` of the failure envelope, when the service sends one. */
  code?: string | undefined;
  /** The `X-Request-Id` of the answer: quote it when reporting a problem. */
  requestId?: string | undefined;
  /** Seconds the service asked to wait (`Retry-After`, else `X-RateLimit-Reset`), on 429 and 503. */
  retryAfter?: number | undefined;
  /** `METHOD path` of the request. */
  request?: string | undefined;
  cause?: unknown;
}

/**
 * A request failed. `message` is the failure envelope's `error` (it names the field at fault), `status`
 * the HTTP status (0 when no answer arrived), `requestId` the answer's `X-Request-Id`.
 *
 * @example
 * ```ts
 * import { Promptstore, PromptstoreError } from "@promptstore/client";
 * const client = new Promptstore({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.PROMPTSTORE_API_KEY! });
 * try {
 *   await client.get("no-such-prompt");
 * } catch (error) {
 *   if (error instanceof PromptstoreError && error.status === 404) console.log(error.message, error.requestId);
 * } finally {
 *   client.close();
 * }
 * ```
 */
export class PromptstoreError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly request: string | undefined;

  constructor(message: string, details: PromptstoreErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "PromptstoreError";
    this.status = details.status;
    this.code = details.code;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
    this.request = details.request;
  }
}

/**
 * No answer: the service could not be reached, or the connection broke before an answer. `status` is 0.
 *
 * @example
 * ```ts
 * import { Promptstore, PromptstoreNetworkError } from "@promptstore/client";
 * const client = new Promptstore({ baseUrl: "http://127.0.0.1:9", apiKey: "ps_…", mode: "none", retries: 0 });
 * await client.list().catch((e) => console.log(e instanceof PromptstoreNetworkError, e.status)); // true 0
 * ```
 */
export class PromptstoreNetworkError extends PromptstoreError {
  constructor(message: string, details: Omit<PromptstoreErrorDetails, "status">) {
    super(message, { ...details, status: 0, code: details.code ?? "network_error" });
    this.name = "PromptstoreNetworkError";
  }
}

/**
 * No answer within the client's `timeoutMs`. `status` is 0.
 *
 * @example
 * ```ts
 * import { Promptstore, PromptstoreTimeoutError } from "@promptstore/client";
 * const client = new Promptstore({ baseUrl: "http://127.0.0.1:3000", apiKey: "ps_…", timeoutMs: 1 });
 * await client.list().catch((e) => console.log(e instanceof PromptstoreTimeoutError && e.timeoutMs)); // 1
 * client.close();
 * ```
 */
export class PromptstoreTimeoutError extends PromptstoreError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, request: string) {
    super(`${request}: no answer within ${timeoutMs} ms`, { status: 0, code: "timeout", request });
    this.name = "PromptstoreTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `fill()` was not given a value for every `{{ name }}` of the text; `missing` names each, in order of
 * first appearance.
 *
 * @example
 * ```ts
 * import { fill, MissingVariablesError } from "@promptstore/client";
 * try {
 *   fill("Hello {{ name }} from {{ company }}", { name: "Ada" });
 * } catch (error) {
 *   if (error instanceof MissingVariablesError) console.log(error.missing); // ["company"]
 * }
 * ```
 */
export class MissingVariablesError extends Error {
  readonly missing: string[];
  constructor(missing: string[]) {
    super(`missing value${missing.length === 1 ? "" : "s"} for ${missing.map((name) => `{{ ${name} }}`).join(", ")}`);
    this.name = "MissingVariablesError";
    this.missing = missing;
  }
}

/**
 * `fill(..., { strict: true })` was given values the text does not reference; `unexpected` names each.
 *
 * @example
 * ```ts
 * import { fill, UnexpectedVariablesError } from "@promptstore/client";
 * try {
 *   fill("Hello {{ name }}", { name: "Ada", nmae: "typo" }, { strict: true });
 * } catch (error) {
 *   if (error instanceof UnexpectedVariablesError) console.log(error.unexpected); // ["nmae"]
 * }
 * ```
 */
export class UnexpectedVariablesError extends Error {
  readonly unexpected: string[];
  constructor(unexpected: string[]) {
    super(`the text has no variable${unexpected.length === 1 ? "" : "s"} ${unexpected.join(", ")}`);
    this.name = "UnexpectedVariablesError";
    this.unexpected = unexpected;
  }
}
