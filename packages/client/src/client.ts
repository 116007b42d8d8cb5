import { ChangeStream } from "./change-stream.js";
import { PromptstoreError } from "./errors.js";
import { Datasets } from "./evaluations/datasets.js";
import { Evaluations } from "./evaluations/evaluations.js";
import { abortable, fallbackPrompt, unreachable } from "./fallback.js";
import { Hooks } from "./hooks.js";
import { type HttpSettings, request } from "./http.js";
import { PromptMemory } from "./memory.js";
import type { CacheMode, CallOptions, ClientStatus, GetOptions, PromptstoreOptions } from "./options.js";
import type { OutcomeReport, OutcomeStats } from "./outcomes/outcome.js";
import { OutcomeReporter } from "./outcomes/reporter.js";
import { checkAssign, heldArm, servedArm } from "./rollout.js";
import type {
  CreatedPrompt,
  CreatePromptInput,
  DeletedPrompt,
  ImportedPrompt,
  ImportPromptInput,
  ListQuery,
  Prompt,
  PromptList,
  PromptListItem,
  PromptView,
  PromptViewV1,
  PublishedVersion,
  RemovedLabel,
  SavedVersion,
  SaveVersionInput,
  VersionList,
} from "./types.js";
import { type Fillable, type FillOptions, fill, type VariableValue } from "./variables.js";

/**
 * The Promptstore client: typed methods for every endpoint, and `get()`, which serves prompts from memory
 * and keeps them current through the change-event stream (see {@link CacheMode}).
 *
 * Requests time out after `timeoutMs`. Reads are retried with exponential backoff and jitter after a 5xx, a
 * timeout or a broken connection; writes only when the connection was refused (nothing was sent), never
 * after a 5xx, since the write may have been carried out. A 429 is waited out (`Retry-After`, bounded by
 * `maxRetryAfterMs`) and sent again, reads and writes alike: the service refused it unseen.
 *
 * `record()` reports how an answer went (docs/outcomes.md): kept in memory and sent in batches in the background.
 *
 * Call `close()` when done: it ends the stream and every timer, and sends the outcomes still pending.
 *
 * @example
 * ```ts
 * import { Promptstore } from "@promptstore/client";
 * const client = new Promptstore({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.PROMPTSTORE_API_KEY! });
 * const prompt = await client.get("support-bot");
 * const system = client.fill(prompt, { company: "Acme", language: "French" });
 * console.log(prompt.version, system);
 * client.close();
 * ```
 */
export class Promptstore {
  readonly mode: CacheMode;
  /** Datasets of test cases: list, get, create, replace, append, import, export (docs/evaluations.md). */
  readonly datasets: Datasets;
  /** Evaluations: run, get, cases, stop, wait (docs/evaluations.md). */
  readonly evaluations: Evaluations;
  private readonly http: HttpSettings;
  private readonly defaultGuard: boolean;
  private readonly options: PromptstoreOptions;
  /** Aborted by close(): ends the stream, every timer and every refresh in flight. */
  private readonly closer = new AbortController();
  private readonly memory: PromptMemory;
  private readonly stream: ChangeStream;
  private readonly outcomes: OutcomeReporter;

  /**
   * @example
   * ```ts
   * import { Promptstore } from "@promptstore/client";
   * const client = new Promptstore({
   *   baseUrl: "http://127.0.0.1:3000",
   *   apiKey: process.env.PROMPTSTORE_API_KEY!,
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
    const hooks = new Hooks(options, this.closer.signal);
    this.outcomes = new OutcomeReporter(this.http, options, () => this.memory.held(), hooks);
    this.memory = new PromptMemory(
      (promptId, ref, guard, signal) => this.read(promptId, ref, guard, signal),
      options.ttlMs ?? 60_000,
      this.outcomes.memoryOptions(options),
      hooks,
      this.closer.signal,
      () => (this.mode === "watch" ? this.stream.firstConnection() : undefined),
    );
    this.stream = new ChangeStream(this.http, options, this.memory, hooks, this.closer.signal);
    this.datasets = new Datasets(this.http, this.closer.signal);
    this.evaluations = new Evaluations(this.http, this.closer.signal);
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
   * const sticky = await client.get("support-bot", { assign: "user-42" }); // a rollout's arm, computed locally
   * ```
   */
  async get(promptId: string, options: GetOptions = {}): Promise<Prompt> {
    const ref = options.version ?? "production";
    const guard = options.guard ?? this.defaultGuard;
    checkAssign(options.assign);
    if (this.mode === "none" || options.cache === false) {
      try {
        const view = await this.read(promptId, ref, guard, options.signal, options.assign);
        this.outcomes.served(view);
        return view;
      } catch (error) {
        return this.fallbackOrThrow(promptId, ref, options, error);
      }
    }
    // A read in a rollout is served the arm its assign value gets, from memory (rollout.ts).
    const watch = () => this.openStream();
    const read = this.memory.get(promptId, ref, guard, watch);
    const served = (view: PromptView) => servedArm(this.memory, promptId, guard, view, options.assign, watch);
    const held = read instanceof Promise ? read.then(served) : served(read);
    if (!(held instanceof Promise)) return held;
    try {
      return await (options.signal ? abortable(held, options.signal) : held);
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
    this.memory.invalidate(created.id);
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
      this.memory.invalidate(promptId);
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
      this.memory.invalidate(input.id);
    }
  }

  /**
   * Points production (or `label`) at a version (`POST /api/v2/prompts/{id}/publish`): `latest` (default), a
   * full hash or a unique prefix; with `percent`, a gradual rollout (docs/releases.md). Rolling back is
   * publishing an older hash. This client's next `get()` serves it.
   *
   * @example
   * ```ts
   * await client.publish("support-bot");                                // latest
   * await client.publish("support-bot", "91defeb");                     // roll back
   * await client.publish("support-bot", "3c9b472", { label: "staging" });
   * ```
   */
  async publish(
    promptId: string,
    version?: string,
    options: CallOptions & { label?: string; percent?: number } = {},
  ): Promise<PublishedVersion> {
    const { label, percent, signal } = options;
    try {
      return await this.call<PublishedVersion>("POST", `/api/v2/prompts/${encodeURIComponent(promptId)}/publish`, {
        body: { ...(version === undefined ? {} : { version }), ...(label && { label }), ...(percent && { percent }) },
        idempotent: false,
        signal,
      });
    } finally {
      this.memory.invalidate(promptId);
    }
  }

  /** Removes a label (not production) from a prompt (`DELETE /api/v2/prompts/{id}/labels/{label}`). */
  async removeLabel(promptId: string, label: string, options: CallOptions = {}): Promise<RemovedLabel> {
    try {
      const path = `/api/v2/prompts/${encodeURIComponent(promptId)}/labels/${encodeURIComponent(label)}`;
      return await this.call<RemovedLabel>("DELETE", path, { idempotent: false, signal: options.signal });
    } finally {
      this.memory.invalidate(promptId);
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
      this.memory.drop(promptId);
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

  // ---------------------------------------------------------------- outcomes

  /**
   * Reports how the answer to a read went (docs/outcomes.md): `read` is what {@link Promptstore.get} returned
   * (its prompt, version, label and arm go with it). Kept in memory and sent in batches in the background: no
   * request, no promise, never a throw. A value that is not valid, or a fallback's read, is counted as `invalid`.
   *
   * @example
   * ```ts
   * const prompt = await client.get("support-bot", { assign: userId });
   * const started = performance.now();
   * const answer = await callModel(client.fill(prompt, { company: "Acme" }));
   * client.record(prompt, {
   *   ok: answer.parsed !== undefined,
   *   latency_ms: performance.now() - started,
   *   tokens: { input: answer.usage.input_tokens, output: answer.usage.output_tokens },
   * });
   * ```
   */
  record(read: Prompt, outcome: OutcomeReport): void {
    this.outcomes.record(read, outcome);
  }

  /** Counts of `record()`'s outcomes (see {@link OutcomeStats}): `recorded` = `sent` + `refused` + `dropped` + `pending`. */
  outcomeStats(): OutcomeStats {
    return this.outcomes.stats();
  }

  /**
   * Sends the outcomes pending now, without waiting for the batch's count or time. Resolves once they are sent,
   * or once the server could not take them (they stay pending and are tried again later). Never rejects.
   */
  flush(): Promise<void> {
    return this.outcomes.flush();
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Opens the change stream now (mode `watch`) instead of on the first read, and resolves true once it is
   * live, false when the client does not watch, is closed, or the stream is not live within `timeoutMs`.
   * Rejects with the typed {@link PromptstoreError} when the service refuses the key (401, 403).
   *
   * @example
   * ```ts
   * if (!(await client.ready(5_000))) console.warn("serving with a TTL until the stream is back");
   * ```
   */
  ready(timeoutMs = this.http.timeoutMs): Promise<boolean> {
    if (this.mode !== "watch" || this.closer.signal.aborted) return Promise.resolve(false);
    return this.stream.ready(timeoutMs);
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
    return {
      mode: this.mode,
      stream: this.stream.state,
      lastEventId: this.stream.lastEventId,
      ...this.memory.counts(),
    };
  }

  /**
   * Ends the stream, every timer and every refresh in flight, at once; reads held stay readable. The outcomes
   * pending are sent, once: the promise resolves after that (what could not be sent is counted as dropped) and
   * never rejects. A caller that records nothing need not wait for it.
   *
   * @example
   * ```ts
   * process.on("SIGTERM", async () => {
   *   await client.close(); // the last outcomes sent
   *   process.exit(0);
   * });
   * ```
   */
  close(): Promise<void> {
    if (!this.closer.signal.aborted) {
      this.closer.abort(new PromptstoreError("the client was closed", { status: 0, code: "closed" }));
      this.stream.close();
    }
    return this.outcomes.close();
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

  private read(
    promptId: string,
    ref: string,
    guard: boolean,
    signal?: AbortSignal,
    assign?: string,
  ): Promise<PromptView> {
    return this.call<PromptView>("GET", `/api/v2/prompts/${encodeURIComponent(promptId)}`, {
      query: { version: ref === "production" ? undefined : ref, guard: guard ? undefined : "false", assign },
      idempotent: true,
      signal,
    });
  }

  private fallbackOrThrow(promptId: string, ref: string, options: GetOptions, error: unknown): Prompt {
    if (!unreachable(error)) throw error;
    // What is held, even out of date, comes before a fallback (a `cache: false` read lands here too).
    const guard = options.guard ?? this.defaultGuard;
    const held = this.memory.peek(promptId, ref, guard);
    if (held !== undefined) return heldArm((...key) => this.memory.peek(...key), promptId, guard, held, options.assign);
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

  private openStream(): void {
    if (this.mode === "watch") this.stream.open();
  }
}
