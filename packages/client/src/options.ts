import type { FetchLike } from "./http.js";
import type { Fallback, PromptEvent, VersionRef } from "./types.js";

/**
 * How `get()` keeps what it has read:
 * - `watch` (default): in memory, kept current by the change-event stream (`GET /api/v2/events`), opened
 *   once, on the first read; while the stream is down, `ttl` applies until it is back.
 * - `ttl`: in memory for `ttlMs`, then served stale while it is read again in the background.
 * - `none`: every `get()` asks the service.
 *
 * A version named by its full hash (or a prefix) never changes and is kept for good in `watch` and `ttl`.
 */
export type CacheMode = "watch" | "ttl" | "none";

/** What `onChange` reports: the version now served for a prompt and reference. */
export interface PromptChange {
  promptId: string;
  /** The reference read: `production`, `latest` or a hash. */
  ref: string;
  guard: boolean;
  version: string;
  /** The version served before, null on the first read. */
  previousVersion: string | null;
}

/** Where the change-event stream stands. */
export type StreamState = "idle" | "connecting" | "live" | "down" | "closed";

/** What {@link Promptstore.status} reports. */
export interface ClientStatus {
  mode: CacheMode;
  stream: StreamState;
  /** The id of the last event received (`Last-Event-ID` of the next connection); "" before the first. */
  lastEventId: string;
  /** Reads held in memory (a prompt, reference and guard each). */
  cached: number;
  /** Reads of the service in flight. */
  reading: number;
}

export interface PromptstoreOptions {
  /** Where the service runs, e.g. `https://prompts.example.com`. */
  baseUrl: string;
  /** The project's API key. */
  apiKey: string;
  /** See {@link CacheMode}. Default `watch`. */
  mode?: CacheMode;
  /** How long a read is served from memory without the stream (mode `ttl`, or `watch` while the stream is down). Default 60 000. */
  ttlMs?: number;
  /** The default of `get()`'s `guard`. Default true. */
  guard?: boolean;
  /** Per attempt: a request without an answer in this time is aborted. Default 10 000. */
  timeoutMs?: number;
  /** Retries after the first attempt (see {@link Promptstore} for which requests are retried). Default 2. */
  retries?: number;
  /** First retry backoff, doubled each retry, with full jitter. Default 200. */
  retryBaseDelayMs?: number;
  /** Longest retry backoff. Default 5 000. */
  retryMaxDelayMs?: number;
  /** Longest wait for a 429's `Retry-After` / `X-RateLimit-Reset`; a longer one is cut to this. Default 60 000. */
  maxRetryAfterMs?: number;
  /** First reconnection delay of the stream when the server names none (`retry:`). Default 1 000. */
  reconnectDelayMs?: number;
  /** Longest reconnection delay of the stream. Default 30 000. */
  maxReconnectDelayMs?: number;
  /** The stream is taken as dead after this long without a byte (the server sends a heartbeat every 15 s). Default 45 000. */
  heartbeatTimeoutMs?: number;
  /**
   * Served by `get()` when the service cannot be reached (no answer, a timeout, 5xx or 429) and nothing is
   * in memory: per prompt id, or a function of the id and reference. `get()`'s own `fallback` comes first.
   */
  fallback?: Record<string, Fallback> | ((promptId: string, ref: string) => Fallback | undefined);
  /** Told every time the version served for a prompt and reference changes (also on the first read). */
  onChange?: (change: PromptChange) => void;
  /** Told of every prompt event the stream delivers (replayed ones too); a project's own events are ignored. */
  onEvent?: (event: PromptEvent) => void;
  /** Told of failures in the background (the stream, refreshes); they never reach a caller. */
  onError?: (error: unknown) => void;
  /** How outcomes reported with `record()` are batched and sent (docs/outcomes.md). */
  outcomes?: OutcomeOptions;
  /**
   * Report what this instance serves (per prompt and label, the hash held) to the fleet view, with a heartbeat
   * at least every `outcomes.heartbeatMs`, even when nothing is recorded. Default false: a client that never
   * calls `record()` then sends nothing. Batches of outcomes carry the report either way.
   */
  reportServing?: boolean;
  /** The `fetch` to use. Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** How `record()`'s outcomes are sent: batches by count and by time, from a bounded buffer. */
export interface OutcomeOptions {
  /** Outcomes per request (`POST /api/v2/outcomes`), 1 to 1 000; a batch goes as soon as this many are pending. Default 500. */
  batchSize?: number;
  /** The longest an outcome waits before it is sent. Default 5 000. */
  flushIntervalMs?: number;
  /** Outcomes held at most while they wait (the server away, say); beyond, the oldest are dropped and counted. Default 10 000. */
  bufferSize?: number;
  /** The first wait before a batch the server could not take (no answer, 5xx, 429 without `Retry-After`) is sent again; doubled each time. Default 1 000. */
  retryDelayMs?: number;
  /** The longest of those waits. Default 60 000. (A 429's `Retry-After` is obeyed up to `maxRetryAfterMs`.) */
  maxRetryDelayMs?: number;
  /** With `reportServing`: the longest between two fleet reports. Default 15 000. */
  heartbeatMs?: number;
}

export interface GetOptions {
  /** `production` (default), `latest`, a label, a full version hash or a unique prefix of 7+ characters. */
  version?: VersionRef;
  /**
   * When the label read has a gradual rollout (docs/releases.md): the value that picks the arm, such as a user
   * or tenant id. The same prompt, label and value always get the same arm, the one the server would give;
   * computed from memory, with both arms held. Without it, each call is assigned at random, as the server does.
   */
  assign?: string;
  /** Append the anti-injection guard to `prompt`. Default: the client's `guard` (true). */
  guard?: boolean;
  /** Served when the service cannot be reached and nothing is in memory; before the client's `fallback`. */
  fallback?: Fallback;
  /** false: ask the service and leave memory alone. Default true (false in mode `none`). */
  cache?: boolean;
  /** Aborts the wait for the service (not a refresh shared with other callers). */
  signal?: AbortSignal;
}

export interface CallOptions {
  signal?: AbortSignal;
}
