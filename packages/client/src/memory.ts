import type { Hooks } from "./hooks.js";
import type { PromptstoreOptions } from "./options.js";
import { sameRollout } from "./rollout.js";
import type { PromptEvent, PromptView } from "./types.js";

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

/** Reads a reference from the service. */
export type ReadPrompt = (promptId: string, ref: string, guard: boolean, signal: AbortSignal) => Promise<PromptView>;

/**
 * What a read waits for before it is sent, if anything: while the stream makes its first connection, a read
 * sent before it is live would have to be sent again once it is (a change between the two would be missed);
 * waiting for it makes the first `get()` one read instead of two.
 */
export type ReadGate = () => Promise<void> | undefined;

const HASH_OR_PREFIX = /^[0-9a-f]{7,64}$/;

/** Freezes a read, so that a caller cannot change what every other caller is served. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const keyOf = (ref: string, guard: boolean) => (guard ? `1${ref}` : `0${ref}`);

/**
 * The reads `get()` holds, per prompt, reference and guard: served from memory while the change stream
 * (change-stream.ts) keeps them current, or for `ttlMs` while it cannot; concurrent callers share one read.
 */
export class PromptMemory {
  private readonly prompts = new Map<string, Map<string, Entry>>();
  /** Sequence number of reads, in the order they were sent. */
  private seq = 0;
  /** Reads numbered above this are covered by the stream: every later change reaches this client as an event. */
  private coverFrom = Number.POSITIVE_INFINITY;
  /** The stream is live: every change reaches this client. */
  private live = false;

  constructor(
    private readonly read: ReadPrompt,
    private readonly ttlMs: number,
    private readonly options: PromptstoreOptions,
    private readonly hooks: Hooks,
    private readonly closed: AbortSignal,
    private readonly gate: ReadGate = () => undefined,
  ) {}

  /** The value held for a reference, current or not: served before a fallback when the service cannot answer. */
  peek(promptId: string, ref: string, guard: boolean): PromptView | undefined {
    return this.prompts.get(promptId)?.get(keyOf(ref, guard))?.value;
  }

  /**
   * What `get()` serves: the value held, at once, when it is current (refreshed in the background once the
   * TTL has run out while the stream is not live), else the read that brings it. `watch` is called whenever
   * the stream should be open.
   */
  get(promptId: string, ref: string, guard: boolean, watch: () => void): PromptView | Promise<PromptView> {
    let refs = this.prompts.get(promptId);
    const key = keyOf(ref, guard);
    let entry = refs?.get(key);
    if (entry?.value !== undefined && !entry.stale) {
      if (entry.pinned || (this.live && entry.seq > this.coverFrom)) return entry.value;
      watch();
      const now = Date.now();
      if (now - entry.validatedAt >= this.ttlMs && now >= entry.retryAt && entry.inflight === undefined) {
        this.hooks.background(this.refresh(entry));
      }
      return entry.value;
    }
    watch();
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
    return this.refresh(entry);
  }

  /** Reads held, and reads of the service in flight: for the client's status. */
  counts(): { cached: number; reading: number } {
    let cached = 0;
    let reading = 0;
    for (const refs of this.prompts.values()) {
      for (const entry of refs.values()) {
        if (entry.value !== undefined) cached++;
        if (entry.inflight !== undefined) reading++;
      }
    }
    return { cached, reading };
  }

  /** Every read held (what `get()` serves from memory, current or being read again): the fleet report's source. */
  held(): PromptView[] {
    const values: PromptView[] = [];
    for (const refs of this.prompts.values()) {
      for (const entry of refs.values()) if (entry.value !== undefined) values.push(entry.value);
    }
    return values;
  }

  /** After a write of this client: the moving references of the prompt are read again. */
  invalidate(promptId: string): void {
    const refs = this.prompts.get(promptId);
    if (refs) for (const entry of refs.values()) if (!entry.pinned) this.invalidateEntry(entry);
  }

  /**
   * The prompt is gone (deleted): every reference held, pinned versions too, is forgotten, so the next `get()`
   * asks the service. A read in flight is read again when it lands, so it cannot put the old prompt back.
   */
  drop(promptId: string): void {
    const refs = this.prompts.get(promptId);
    if (!refs) return;
    for (const entry of [...refs.values()]) {
      entry.gen++;
      entry.value = undefined;
      entry.stale = false;
      this.forget(entry);
    }
  }

  // ---------------------------------------------------------------- what the stream tells

  /** The stream is ready: unless it resumed, every change from now on reaches us; what was read before is read once more. */
  streamReady(resumed: boolean): void {
    if (!resumed || this.coverFrom === Number.POSITIVE_INFINITY) {
      this.coverFrom = this.seq;
      for (const refs of this.prompts.values()) {
        for (const entry of refs.values()) {
          if (!entry.pinned && entry.value !== undefined && entry.inflight === undefined) {
            this.hooks.background(this.refresh(entry));
          }
        }
      }
    }
  }

  /** The stream could not replay what was missed: every moving reference is read again. */
  streamReset(): void {
    this.coverFrom = this.seq;
    for (const refs of this.prompts.values()) {
      for (const entry of refs.values()) if (!entry.pinned) this.invalidateEntry(entry);
    }
  }

  /** Whether the stream is live (ready or reset, and not dropped or closed since). */
  setLive(live: boolean): void {
    this.live = live;
  }

  streamDropped(): void {
    if (this.live) {
      // What the stream kept current was current until now: from now on the TTL counts.
      const now = Date.now();
      for (const refs of this.prompts.values()) {
        for (const entry of refs.values()) if (entry.seq > this.coverFrom) entry.validatedAt = now;
      }
    }
    this.live = false;
  }

  applyEvent(event: PromptEvent): void {
    if (event.type === "prompt.deleted") {
      this.drop(event.prompt_id);
      return;
    }
    const refs = this.prompts.get(event.prompt_id);
    if (!refs) return;
    const read = event.read;
    for (const entry of refs.values()) {
      if (entry.pinned) continue;
      // A label's move carries the label's new read: served at once, as a publish's is for production.
      if (
        event.type === "prompt.label_moved" &&
        read !== undefined &&
        entry.ref === event.label &&
        entry.guard &&
        read.version === event.version &&
        read.rollout === undefined
      ) {
        entry.gen++;
        this.store(entry, read, ++this.seq, Date.now());
        continue;
      }
      // A label's read (or a read in a rollout) cannot be checked against the event's two pointers: it is
      // read again, so a moved or removed label is never served from memory afterwards.
      if (
        (entry.ref !== "production" && entry.ref !== "latest") ||
        event.type === "prompt.rollout_changed" ||
        entry.value?.rollout !== undefined
      ) {
        this.invalidateEntry(entry);
        continue;
      }
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

  // ---------------------------------------------------------------- entries

  /** Reads an entry from the service; concurrent callers share one request. */
  private refresh(entry: Entry): Promise<PromptView> {
    if (entry.inflight !== undefined && entry.inflightGen === entry.gen) return entry.inflight;
    const gen = entry.gen;
    let seq = 0;
    let startedAt = 0;
    const send = () => {
      // Numbered when sent, not when asked for: the stream covers a read sent after it went live.
      seq = ++this.seq;
      startedAt = Date.now();
      return this.read(entry.promptId, entry.ref, entry.guard, this.closed);
    };
    const gate = entry.pinned ? undefined : this.gate();
    const promise: Promise<PromptView> = (gate === undefined ? send() : gate.then(send)).then(
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
    if (this.live && seq <= this.coverFrom && !entry.pinned) this.hooks.background(this.refresh(entry));
    // A new read of a label in a rollout may bring the other arm (chosen at random): the same versions are served.
    if (previous === undefined || (previous.version !== value.version && !sameRollout(previous, value))) {
      this.hooks.call(() =>
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
    refs?.delete(keyOf(entry.ref, entry.guard));
    if (refs?.size === 0) this.prompts.delete(entry.promptId);
  }

  /** Marks an entry out of date and reads it again at once: no caller is served the old value from now on. */
  private invalidateEntry(entry: Entry): void {
    entry.gen++;
    if (entry.value !== undefined) entry.stale = true;
    if (entry.value !== undefined || entry.inflight !== undefined) this.hooks.background(this.refresh(entry));
  }
}
