import { PromptstoreError, PromptstoreNetworkError, PromptstoreTimeoutError } from "./errors.js";
import { buildUrl, type FetchLike, type HttpSettings, request, retryAfterSeconds, sleep } from "./http.js";
import { readEventStream, SseParser } from "./sse.js";
import type {
  CreatedPrompt,
  CreatePromptInput,
  DeletedPrompt,
  Fallback,
  ImportedPrompt,
  ImportPromptInput,
  ListQuery,
  Prompt,
  PromptEvent,
  PromptList,
  PromptListItem,
  PromptView,
  PromptViewV1,
  PublishedVersion,
  ReadyEvent,
  ResetEvent,
  SavedVersion,
  SaveVersionInput,
  VersionList,
  VersionRef,
} from "./types.js";
import { type Fillable, type FillOptions, fill, type VariableValue, variablesOf } from "./variables.js";

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
  /** Told of every change event the stream delivers (replayed ones too). */
  onEvent?: (event: PromptEvent) => void;
  /** Told of failures in the background (the stream, refreshes); they never reach a caller. */
  onError?: (error: unknown) => void;
  /** The `fetch` to use. Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

export interface GetOptions {
  /** `production` (default), `latest`, a full version hash or a unique prefix of 7+ characters. */
  version?: VersionRef;
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

interface Entry {
  readonly promptId: string;
  readonly ref: string;
  readonly guard: boolean;
  /** A hash or prefix: names one version, which never changes. */
  readonly pinned: boolean;
  value: PromptView | undefined;
  /** An event (or a write of this client) says `value` is no longer what the reference serves. */
  stale: boolean;
  /** The sequence number of the read that produced `value`. */
  seq: number;
  /** When `value` was last known current (ms). */
  validatedAt: number;
  /** Bumped by every invalidation; a read started before it cannot produce a current value. */
  gen: number;
  inflight: Promise<PromptView> | undefined;
  inflightGen: number;
  /** No background refresh before this time (ms), after one failed. */
  retryAt: number;
  failures: number;
}

const HASH_OR_PREFIX = /^[0-9a-f]{7,64}$/;
const EVENT_TYPES = new Set(["prompt.created", "prompt.version_saved", "prompt.published", "prompt.deleted"]);
const EPOCH = "1970-01-01T00:00:00.000Z";

/** Freezes a read, so that a caller cannot change what every other caller is served. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Failures where the service could not serve at all: the fallback's cases. */
function unreachable(error: unknown): boolean {
  return (
    error instanceof PromptstoreNetworkError ||
    error instanceof PromptstoreTimeoutError ||
    (error instanceof PromptstoreError && (error.status >= 500 || error.status === 429))
  );
}

function fallbackPrompt(promptId: string, fallback: Fallback): Prompt {
  const given = typeof fallback === "string" ? { prompt: fallback } : fallback;
  const text = given.prompt;
  return deepFreeze({
    id: promptId,
    name: promptId,
    description: "",
    sections: [{ id: "fallback", title: "Fallback", content: text, enabled: true }],
    variables: variablesOf(text),
    version: "fallback",
    production_version: null,
    created_at: EPOCH,
    updated_at: EPOCH,
    ...given,
    label: "fallback",
    prompt: text,
    fallback: true,
  });
}

/**
 * The Promptstore client: typed methods for every endpoint, and `get()`, which serves prompts from memory
 * and keeps them current through the change-event stream (see {@link CacheMode}).
 *
 * Requests time out after `timeoutMs`. Reads are retried with exponential backoff and jitter after a 5xx, a
 * timeout or a broken connection; writes only when the connection was refused (nothing was sent), never
 * after a 5xx, since the write may have been carried out. A 429 is waited out (`Retry-After`, bounded by
 * `maxRetryAfterMs`) and sent again, reads and writes alike: the service refused it unseen.
 *
 * Call `close()` when done: it ends the stream and every timer.
 *
 * @example
 * ```ts
 * import { Promptstore } from "@promptstore/client";
 * const client = new Promptstore({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.PROMPTSTORE_KEY! });
 * const prompt = await client.get("support-bot");
 * const system = client.fill(prompt, { company: "Acme", language: "French" });
 * console.log(prompt.version, system);
 * client.close();
 * ```
 */
export class Promptstore {
  readonly mode: CacheMode;
  private readonly http: HttpSettings;
  private readonly ttlMs: number;
  private readonly defaultGuard: boolean;
  private readonly options: PromptstoreOptions;
  private readonly prompts = new Map<string, Map<string, Entry>>();
  private readonly closer = new AbortController();
  private closed = false;

  /** Sequence number of reads, in the order they were sent. */
  private seq = 0;
  /** Reads numbered above this are covered by the stream: every later change reaches this client as an event. */
  private coverFrom = Number.POSITIVE_INFINITY;
  private live = false;
  private streamState: StreamState = "idle";
  private lastEventId = "";
  private serverRetryMs: number | undefined;
  private streamController: AbortController | undefined;
  private watchdog: ReturnType<typeof setTimeout> | undefined;
  private readyWaiters: ((live: boolean) => void)[] = [];

  /**
   * @example
   * ```ts
   * import { Promptstore } from "@promptstore/client";
   * const client = new Promptstore({
   *   baseUrl: "http://127.0.0.1:3000",
   *   apiKey: process.env.PROMPTSTORE_KEY!,
   *   fallback: { "support-bot": "You are a helpful support agent." },
   *   onChange: (c) => console.log(`${c.promptId}@${c.ref} now serves ${c.version}`),
   * });
   * client.close();
   * ```
   */
  constructor(options: PromptstoreOptions) {
    if (!options.baseUrl) throw new TypeError("Promptstore: baseUrl is required");
    if (!options.apiKey) throw new TypeError("Promptstore: apiKey is required");
    const fetchImpl = options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
    this.options = options;
    this.mode = options.mode ?? "watch";
    this.ttlMs = options.ttlMs ?? 60_000;
    this.defaultGuard = options.guard ?? true;
    this.http = {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: fetchImpl,
      timeoutMs: options.timeoutMs ?? 10_000,
      retries: options.retries ?? 2,
      baseDelayMs: options.retryBaseDelayMs ?? 200,
      maxDelayMs: options.retryMaxDelayMs ?? 5_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      headers: options.headers ?? {},
    };
  }

  // ---------------------------------------------------------------- typed endpoints

  /**
   * Lists the project's prompts, oldest first (`GET /api/v2/prompts`). With `limit`, one page; follow
   * `next_cursor` (or use {@link Promptstore.listAll}).
   *
   * @example
   * ```ts
   * const { project, prompts } = await client.list();
   * console.log(project.name, prompts.map((p) => `${p.id} ${p.production_version ?? "(unpublished)"}`));
   * ```
   */
  async list(query: ListQuery = {}, options: CallOptions = {}): Promise<PromptList> {
    return this.call<PromptList>("GET", "/api/v2/prompts", { query, idempotent: true, signal: options.signal });
  }

  /**
   * Every prompt of the project, page by page (100 a request).
   *
   * @example
   * ```ts
   * for await (const prompt of client.listAll()) console.log(prompt.id, prompt.latest_version);
   * ```
   */
  async *listAll(options: CallOptions = {}): AsyncGenerator<PromptListItem, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.list(cursor === undefined ? { limit: 100 } : { limit: 100, cursor }, options);
      yield* page.prompts;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  /**
   * Reads a prompt (`GET /api/v2/prompts/{id}`): `production` unless `version` names another, with the
   * guard unless `guard: false`. Served from memory when the client holds it (see {@link CacheMode});
   * when the service cannot be reached and nothing is held, the `fallback` is served (`fallback: true`).
   *
   * @example
   * ```ts
   * const prompt = await client.get("support-bot");                          // production, guard on
   * const draft = await client.get("support-bot", { version: "latest", guard: false });
   * const pinned = await client.get("support-bot", { version: prompt.version }); // kept for good
   * const safe = await client.get("support-bot", { fallback: "You are a helpful support agent." });
   * ```
   */
  async get(promptId: string, options: GetOptions = {}): Promise<Prompt> {
    const ref = options.version ?? "production";
    const guard = options.guard ?? this.defaultGuard;
    if (this.mode === "none" || options.cache === false) {
      try {
        return await this.read(promptId, ref, guard, options.signal);
      } catch (error) {
        return this.fallbackOrThrow(promptId, ref, options, error);
      }
    }
    let refs = this.prompts.get(promptId);
    const key = guard ? `1${ref}` : `0${ref}`;
    let entry = refs?.get(key);
    if (entry?.value !== undefined && !entry.stale) {
      if (entry.pinned || (this.live && entry.seq > this.coverFrom)) return entry.value;
      this.openStream();
      const now = Date.now();
      if (now - entry.validatedAt >= this.ttlMs && now >= entry.retryAt && entry.inflight === undefined) {
        this.background(this.refresh(entry));
      }
      return entry.value;
    }
    this.openStream();
    if (entry === undefined) {
      entry = {
        promptId,
        ref,
        guard,
        pinned: HASH_OR_PREFIX.test(ref),
        value: undefined,
        stale: false,
        seq: 0,
        validatedAt: 0,
        gen: 0,
        inflight: undefined,
        inflightGen: -1,
        retryAt: 0,
        failures: 0,
      };
      if (refs === undefined) {
        refs = new Map();
        this.prompts.set(promptId, refs);
      }
      refs.set(key, entry);
    }
    try {
      const pending = this.refresh(entry);
      return await (options.signal ? abortable(pending, options.signal) : pending);
    } catch (error) {
      return this.fallbackOrThrow(promptId, ref, options, error);
    }
  }

  /**
   * The frozen v1 read (`GET /api/v1/prompts/{id}`): production with the guard, `tools` always present.
   * Not kept in memory.
   *
   * @example
   * ```ts
   * const legacy = await client.getV1("support-bot");
   * console.log(legacy.version, legacy.tools.length);
   * ```
   */
  async getV1(promptId: string, options: CallOptions = {}): Promise<PromptViewV1> {
    return this.call<PromptViewV1>("GET", `/api/v1/prompts/${encodeURIComponent(promptId)}`, {
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * The prompt's versions, newest first, with both pointers (`GET /api/v2/prompts/{id}/versions`).
   *
   * @example
   * ```ts
   * const { production_version, versions } = await client.versions("support-bot");
   * for (const v of versions) console.log(v.version.slice(0, 7), v.message, v.version === production_version);
   * ```
   */
  async versions(promptId: string, options: CallOptions = {}): Promise<VersionList> {
    return this.call<VersionList>("GET", `/api/v2/prompts/${encodeURIComponent(promptId)}/versions`, {
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * Creates a prompt with its first version (`POST /api/v2/prompts`), from `sections` or `markdown`.
   *
   * @example
   * ```ts
   * const created = await client.create({
   *   name: "Support Bot",
   *   sections: [{ title: "Role", content: "You help customers of {{ company }}." }],
   *   publish: true,
   * });
   * console.log(created.id, created.version); // "support-bot", "91defeb4…"
   * ```
   */
  async create(input: CreatePromptInput, options: CallOptions = {}): Promise<CreatedPrompt> {
    const created = await this.call<CreatedPrompt>("POST", "/api/v2/prompts", {
      body: input,
      idempotent: false,
      signal: options.signal,
    });
    this.invalidate(created.id);
    return created;
  }

  /**
   * Saves a new version with the full content (`PUT /api/v2/prompts/{id}`); content identical to an
   * existing version creates none (`created: false`). `publish: true` also makes it production.
   *
   * @example
   * ```ts
   * const saved = await client.save("support-bot", {
   *   markdown: "# Role\nYou help customers of {{ company }}, warmly.",
   *   message: "warmer tone",
   * });
   * console.log(saved.version, saved.created);
   * ```
   */
  async save(promptId: string, input: SaveVersionInput, options: CallOptions = {}): Promise<SavedVersion> {
    try {
      return await this.call<SavedVersion>("PUT", `/api/v2/prompts/${encodeURIComponent(promptId)}`, {
        body: input,
        idempotent: false,
        signal: options.signal,
      });
    } finally {
      this.invalidate(promptId);
    }
  }

  /**
   * Imports one prompt with versions made elsewhere (`POST /api/v2/import`): hashes, messages and times are
   * kept, latest is pointed at `latest_version`, production moves only when `production_version` is given.
   * Idempotent, so it is retried like a read.
   */
  async importPrompt(input: ImportPromptInput, options: CallOptions = {}): Promise<ImportedPrompt> {
    try {
      return await this.call<ImportedPrompt>("POST", "/api/v2/import", {
        body: input,
        idempotent: true,
        signal: options.signal,
      });
    } finally {
      this.invalidate(input.id);
    }
  }

  /**
   * Points production at a version (`POST /api/v2/prompts/{id}/publish`): `latest` (default), a full hash
   * or a unique prefix. Rolling back is publishing an older hash. This client's next `get()` serves it.
   *
   * @example
   * ```ts
   * await client.publish("support-bot");             // latest
   * await client.publish("support-bot", "91defeb");  // roll back
   * ```
   */
  async publish(promptId: string, version?: string, options: CallOptions = {}): Promise<PublishedVersion> {
    try {
      return await this.call<PublishedVersion>("POST", `/api/v2/prompts/${encodeURIComponent(promptId)}/publish`, {
        body: version === undefined ? {} : { version },
        idempotent: false,
        signal: options.signal,
      });
    } finally {
      this.invalidate(promptId);
    }
  }

  /**
   * Deletes a prompt with all its versions (`DELETE /api/v2/prompts/{id}`); its id becomes free. Cannot be
   * undone. What this client holds of the prompt is dropped, so its next `get()` asks the service (a 404).
   *
   * @example
   * ```ts
   * await client.delete("old-support-bot"); // { id: "old-support-bot", deleted: true }
   * ```
   */
  async delete(promptId: string, options: CallOptions = {}): Promise<DeletedPrompt> {
    try {
      return await this.call<DeletedPrompt>("DELETE", `/api/v2/prompts/${encodeURIComponent(promptId)}`, {
        idempotent: false,
        signal: options.signal,
      });
    } finally {
      this.drop(promptId);
    }
  }

  /**
   * Fills the `{{ variables }}` of a prompt (or a text): see the standalone {@link fill}.
   *
   * @example
   * ```ts
   * const prompt = await client.get("support-bot");
   * const system = client.fill(prompt, { company: "Acme", language: "French" }, { strict: true });
   * ```
   */
  fill(prompt: Fillable, values: Readonly<Record<string, VariableValue>>, options?: FillOptions): string {
    return fill(prompt, values, options);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Opens the change stream now (mode `watch`) instead of on the first read, and resolves true once it is
   * live, false when the client does not watch, is closed, or the stream is not live within `timeoutMs`.
   *
   * @example
   * ```ts
   * if (!(await client.ready(5_000))) console.warn("serving with a TTL until the stream is back");
   * ```
   */
  ready(timeoutMs = this.http.timeoutMs): Promise<boolean> {
    if (this.mode !== "watch" || this.closed) return Promise.resolve(false);
    if (this.live) return Promise.resolve(true);
    this.openStream();
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (live: boolean) => {
        clearTimeout(timer);
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        resolve(live);
      };
      this.readyWaiters.push(done);
    });
  }

  /**
   * Where things stand: the stream's state, the last event id received, how many reads are held.
   *
   * @example
   * ```ts
   * console.log(client.status); // { mode: "watch", stream: "live", lastEventId: "42", cached: 3, reading: 0 }
   * ```
   */
  get status(): ClientStatus {
    let cached = 0;
    let reading = 0;
    for (const refs of this.prompts.values()) {
      for (const entry of refs.values()) {
        if (entry.value !== undefined) cached++;
        if (entry.inflight !== undefined) reading++;
      }
    }
    return { mode: this.mode, stream: this.streamState, lastEventId: this.lastEventId, cached, reading };
  }

  /**
   * Ends the stream, every timer and every refresh in flight. Reads held stay readable; nothing reopens the
   * stream.
   *
   * @example
   * ```ts
   * process.on("SIGTERM", () => client.close());
   * ```
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.live = false;
    this.streamState = "closed";
    this.closer.abort(new PromptstoreError("the client was closed", { status: 0, code: "closed" }));
    this.streamController?.abort();
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    for (const waiter of [...this.readyWaiters]) waiter(false);
  }

  // ---------------------------------------------------------------- reads and memory

  private async call<T>(
    method: string,
    path: string,
    options: Parameters<typeof request>[3] & { idempotent: boolean },
  ): Promise<T> {
    const result = await request<T>(this.http, method, path, options);
    return result.data as T;
  }

  private read(promptId: string, ref: string, guard: boolean, signal?: AbortSignal): Promise<PromptView> {
    return this.call<PromptView>("GET", `/api/v2/prompts/${encodeURIComponent(promptId)}`, {
      query: { version: ref === "production" ? undefined : ref, guard: guard ? undefined : "false" },
      idempotent: true,
      signal,
    });
  }

  private fallbackOrThrow(promptId: string, ref: string, options: GetOptions, error: unknown): Prompt {
    if (!unreachable(error)) throw error;
    const given = this.options.fallback;
    const fallback =
      options.fallback ??
      (typeof given === "function"
        ? given(promptId, ref)
        : given && Object.hasOwn(given, promptId)
          ? given[promptId]
          : undefined);
    if (fallback === undefined) throw error;
    return fallbackPrompt(promptId, fallback);
  }

  /** Reads an entry from the service; concurrent callers share one request. */
  private refresh(entry: Entry): Promise<PromptView> {
    if (entry.inflight !== undefined && entry.inflightGen === entry.gen) return entry.inflight;
    const gen = entry.gen;
    const seq = ++this.seq;
    const startedAt = Date.now();
    const promise: Promise<PromptView> = this.read(entry.promptId, entry.ref, entry.guard, this.closer.signal).then(
      (value) => {
        if (entry.inflight === promise) entry.inflight = undefined;
        // Invalidated while in flight: this answer may predate the change; the newer read is the one to serve.
        if (entry.gen !== gen) return this.refresh(entry);
        this.store(entry, value, seq, startedAt);
        return entry.value as PromptView;
      },
      (error: unknown) => {
        if (entry.inflight === promise) entry.inflight = undefined;
        if (entry.gen !== gen) return this.refresh(entry);
        entry.failures++;
        entry.retryAt = Date.now() + Math.min(this.ttlMs, 1000 * 2 ** Math.min(entry.failures, 10));
        if (entry.value === undefined) this.forget(entry);
        throw error;
      },
    );
    entry.inflight = promise;
    entry.inflightGen = gen;
    return promise;
  }

  private store(entry: Entry, value: PromptView, seq: number, startedAt: number): void {
    const previous = entry.value;
    entry.value = deepFreeze(value);
    entry.stale = false;
    entry.seq = seq;
    entry.validatedAt = startedAt;
    entry.retryAt = 0;
    entry.failures = 0;
    // Read before the stream was first live: a change between this read and the stream's start would be missed.
    if (this.live && seq <= this.coverFrom && !entry.pinned) this.background(this.refresh(entry));
    if (previous === undefined || previous.version !== value.version) {
      this.hook(() =>
        this.options.onChange?.({
          promptId: entry.promptId,
          ref: entry.ref,
          guard: entry.guard,
          version: value.version,
          previousVersion: previous?.version ?? null,
        }),
      );
    }
  }

  private forget(entry: Entry): void {
    if (entry.value !== undefined || entry.inflight !== undefined) return;
    const refs = this.prompts.get(entry.promptId);
    refs?.delete(entry.guard ? `1${entry.ref}` : `0${entry.ref}`);
    if (refs?.size === 0) this.prompts.delete(entry.promptId);
  }

  /** Marks an entry out of date and reads it again at once: no caller is served the old value from now on. */
  private invalidateEntry(entry: Entry): void {
    entry.gen++;
    if (entry.value !== undefined) entry.stale = true;
    if (entry.value !== undefined || entry.inflight !== undefined) this.background(this.refresh(entry));
  }

  /** After a write of this client: the moving references of the prompt are read again. */
  private invalidate(promptId: string): void {
    const refs = this.prompts.get(promptId);
    if (refs) for (const entry of refs.values()) if (!entry.pinned) this.invalidateEntry(entry);
  }

  /**
   * The prompt is gone (deleted): every reference held, pinned versions too, is forgotten, so the next `get()`
   * asks the service. A read in flight is read again when it lands, so it cannot put the old prompt back.
   */
  private drop(promptId: string): void {
    const refs = this.prompts.get(promptId);
    if (!refs) return;
    for (const entry of [...refs.values()]) {
      entry.gen++;
      entry.value = undefined;
      entry.stale = false;
      this.forget(entry);
    }
  }

  private background(promise: Promise<unknown>): void {
    promise.catch((error: unknown) => {
      if (!this.closed) this.hook(() => this.options.onError?.(error));
    });
  }

  /** Calls an application hook: what it throws goes to onError, and what onError throws nowhere. */
  private hook(call: () => void): void {
    try {
      call();
    } catch (error) {
      try {
        this.options.onError?.(error);
      } catch {
        // A failing onError has nowhere left to go.
      }
    }
  }

  // ---------------------------------------------------------------- the change stream

  private openStream(): void {
    if (this.mode !== "watch" || this.closed || this.streamState !== "idle") return;
    this.streamState = "connecting";
    this.background(this.runStream());
  }

  private async runStream(): Promise<void> {
    let attempt = 0;
    while (!this.closed) {
      let wait: number | undefined;
      const wasLive = await this.connectOnce().then(
        (outcome) => {
          wait = outcome.waitMs;
          return outcome.wasLive;
        },
        (error: unknown) => {
          if (!this.closed) this.hook(() => this.options.onError?.(error));
          return false;
        },
      );
      this.dropped();
      if (this.closed) return;
      if (wasLive) attempt = 0;
      const base = this.serverRetryMs ?? this.options.reconnectDelayMs ?? 1_000;
      const max = this.options.maxReconnectDelayMs ?? 30_000;
      const step = Math.min(max, base * 2 ** attempt);
      const delay = wait !== undefined ? Math.min(wait, max) : step / 2 + Math.random() * (step / 2);
      attempt++;
      try {
        await sleep(delay, this.closer.signal);
      } catch {
        return;
      }
    }
  }

  /** One connection of the stream, until it ends. */
  private async connectOnce(): Promise<{ wasLive: boolean; waitMs?: number }> {
    const controller = new AbortController();
    this.streamController = controller;
    this.streamState = "connecting";
    const resumed = this.lastEventId !== "";
    const headers: Record<string, string> = {
      ...this.http.headers,
      accept: "text/event-stream",
      "cache-control": "no-cache",
      "x-api-key": this.http.apiKey,
    };
    if (resumed) headers["last-event-id"] = this.lastEventId;
    const connectTimer = setTimeout(() => controller.abort(), this.http.timeoutMs);
    let res: Response;
    try {
      // include=read: each live event carries the production read it leads to (docs/events.md).
      res = await this.http.fetch(buildUrl(this.http.baseUrl, "/api/v2/events", { include: "read" }), {
        method: "GET",
        headers,
        signal: controller.signal,
      });
    } catch (error) {
      if (this.closed) return { wasLive: false };
      throw new PromptstoreNetworkError(`GET /api/v2/events: ${(error as Error)?.message ?? error}`, {
        request: "GET /api/v2/events",
        cause: error,
      });
    } finally {
      clearTimeout(connectTimer);
    }
    if (!res.ok || res.body === null) {
      const text = await res.text().catch(() => "");
      let message = `GET /api/v2/events: HTTP ${res.status}`;
      try {
        const envelope = JSON.parse(text) as { error?: unknown };
        if (typeof envelope.error === "string") message = envelope.error;
      } catch {
        // not an envelope
      }
      const retryAfter = retryAfterSeconds(res.headers);
      const max = this.options.maxReconnectDelayMs ?? 30_000;
      this.hook(() =>
        this.options.onError?.(
          new PromptstoreError(message, {
            status: res.status,
            requestId: res.headers.get("x-request-id") ?? undefined,
            retryAfter,
            request: "GET /api/v2/events",
          }),
        ),
      );
      // 429: the service names the wait. A server without the stream (404), or a refused key: try again seldom.
      if (retryAfter !== undefined && (res.status === 429 || res.status === 503))
        return { wasLive: false, waitMs: retryAfter * 1000 };
      if (res.status < 500 && res.status !== 429) return { wasLive: false, waitMs: max };
      return { wasLive: false };
    }
    let wasLive = false;
    const parser = new SseParser({
      onRetry: (ms) => {
        this.serverRetryMs = ms;
      },
      onMessage: (message) => {
        if (message.lastEventId !== "") this.lastEventId = message.lastEventId;
        if (this.closed) return;
        if (this.onStreamMessage(message.type, message.data, resumed)) wasLive = true;
      },
    });
    parser.lastEventId = this.lastEventId;
    const heartbeat = this.options.heartbeatTimeoutMs ?? 45_000;
    const arm = () => {
      if (this.watchdog !== undefined) clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => controller.abort(), heartbeat);
    };
    arm();
    try {
      await readEventStream(res.body, parser, arm);
    } catch (error) {
      if (!this.closed && !controller.signal.aborted) {
        this.hook(() =>
          this.options.onError?.(
            new PromptstoreNetworkError(`GET /api/v2/events: the stream broke: ${(error as Error)?.message ?? error}`, {
              request: "GET /api/v2/events",
              cause: error,
            }),
          ),
        );
      }
    } finally {
      if (this.watchdog !== undefined) clearTimeout(this.watchdog);
      this.watchdog = undefined;
      controller.abort();
    }
    return { wasLive };
  }

  /** Applies one message of the stream; true once the stream is live (ready or reset). */
  private onStreamMessage(type: string, data: string, resumed: boolean): boolean {
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return this.live;
    }
    if (type === "ready") {
      const ready = payload as ReadyEvent;
      if (typeof ready.last_event_id === "number" && this.lastEventId === "")
        this.lastEventId = String(ready.last_event_id);
      if (!resumed || this.coverFrom === Number.POSITIVE_INFINITY) {
        // From now on every change reaches us; what was read before is read once more in the background.
        this.coverFrom = this.seq;
        for (const refs of this.prompts.values()) {
          for (const entry of refs.values()) {
            if (!entry.pinned && entry.value !== undefined && entry.inflight === undefined) {
              this.background(this.refresh(entry));
            }
          }
        }
      }
      this.becameLive();
      return true;
    }
    if (type === "reset") {
      const reset = payload as ResetEvent;
      if (typeof reset.last_event_id === "number") this.lastEventId = String(reset.last_event_id);
      this.coverFrom = this.seq;
      for (const refs of this.prompts.values()) {
        for (const entry of refs.values()) if (!entry.pinned) this.invalidateEntry(entry);
      }
      this.becameLive();
      return true;
    }
    if (EVENT_TYPES.has(type)) {
      const event = payload as PromptEvent;
      if (typeof event.prompt_id !== "string") return this.live;
      this.applyEvent(event);
      this.hook(() => this.options.onEvent?.(event));
    }
    return this.live;
  }

  private applyEvent(event: PromptEvent): void {
    if (event.type === "prompt.deleted") {
      this.drop(event.prompt_id);
      return;
    }
    const refs = this.prompts.get(event.prompt_id);
    if (!refs) return;
    const read = event.read;
    for (const entry of refs.values()) {
      if (entry.pinned) continue;
      const target = entry.ref === "latest" ? event.latest_version : (event.production_version ?? event.latest_version);
      if (
        read !== undefined &&
        entry.ref === "production" &&
        entry.guard &&
        read.version === target &&
        read.production_version === event.production_version
      ) {
        // The event carries what production now serves: served at once, without a request. A read in flight
        // may predate the change, so it is read again when it lands instead of being stored.
        entry.gen++;
        this.store(entry, read, ++this.seq, Date.now());
        continue;
      }
      const value = entry.value;
      const current =
        value !== undefined &&
        !entry.stale &&
        entry.inflight === undefined &&
        value.version === target &&
        value.production_version === event.production_version;
      if (!current) this.invalidateEntry(entry);
    }
  }

  private becameLive(): void {
    this.live = true;
    this.streamState = "live";
    for (const waiter of [...this.readyWaiters]) waiter(true);
  }

  private dropped(): void {
    if (this.closed) return;
    if (this.live) {
      // What the stream kept current was current until now: from now on the TTL counts.
      const now = Date.now();
      for (const refs of this.prompts.values()) {
        for (const entry of refs.values()) if (entry.seq > this.coverFrom) entry.validatedAt = now;
      }
    }
    this.live = false;
    this.streamState = "down";
  }
}

/** Rejects when `signal` aborts, without cancelling `promise` (shared with other callers). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
