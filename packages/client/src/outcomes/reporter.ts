/**
 * Outcomes and the fleet report (docs/outcomes.md): `record()` puts an outcome in a bounded buffer and returns;
 * batches go to `POST /api/v2/outcomes` in the background, by count and by time, one request at a time. A
 * server that is away (no answer, a 5xx, a 429) keeps the batch for a later try, with backoff (or the wait a
 * 429 names); a full buffer drops its oldest. Every batch carries the instance's report of what it serves,
 * and with `reportServing` a heartbeat carries it at least every `heartbeatMs`.
 */
import { PromptstoreError } from "../errors.js";
import type { Hooks } from "../hooks.js";
import { type HttpSettings, request } from "../http.js";
import type { PromptstoreOptions } from "../options.js";
import { otherArmVersion } from "../rollout.js";
import type { PromptView } from "../types.js";
import { FULL_HASH } from "../version-ref.js";
import {
  type Entry,
  entryOf,
  LIMITS,
  type OutcomeReport,
  type OutcomeStats,
  outcomeJson,
  type ReadRef,
  readRef,
  wireLabel,
} from "./outcome.js";
import { Ring } from "./ring.js";

/** The client's name and version in a fleet report (package.json's version; a test keeps them equal). */
export const SDK = "typescript/0.1.0";

interface OutcomeSettings {
  batchSize: number;
  flushIntervalMs: number;
  bufferSize: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  heartbeatMs: number;
  reportServing: boolean;
}

/** The client's options with their defaults (OutcomeOptions, options.ts). */
function settingsOf(options: PromptstoreOptions): OutcomeSettings {
  const given = options.outcomes ?? {};
  return {
    batchSize: Math.min(LIMITS.perBatch, Math.max(1, Math.floor(given.batchSize ?? 500))),
    flushIntervalMs: given.flushIntervalMs ?? 5_000,
    bufferSize: Math.max(1, Math.floor(given.bufferSize ?? 10_000)),
    retryDelayMs: given.retryDelayMs ?? 1_000,
    maxRetryDelayMs: given.maxRetryDelayMs ?? 60_000,
    heartbeatMs: given.heartbeatMs ?? 15_000,
    reportServing: options.reportServing ?? false,
  };
}

/** One entry of a fleet report: the hash served per prompt and label (none for a read by version or latest). */
export interface Serving {
  prompt: string;
  label?: string;
  version: string;
}

/** A batch's fate: taken (some refused one by one) or refused whole, to be tried again, or too large. */
type Verdict = "done" | "retry" | "smaller";

/**
 * Why a drain runs: `count`, a batch's worth is pending (full batches go, the rest waits for its time);
 * `all`, the time came, a retry, or `flush()` (all that is pending goes); `heartbeat`, the same, with a request
 * even when nothing is pending; `final`, `close()` (all, once, no retry).
 */
type Drain = "count" | "all" | "heartbeat" | "final";

/** A timer that does not keep a process alive (Node.js, Bun, Deno); elsewhere timers never do. */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/** A random UUID (v4): `crypto.randomUUID` where it exists (not in a page served over plain HTTP). */
function randomId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class OutcomeReporter {
  /** This client instance's id in fleet reports: random, the same for its whole life. */
  readonly instanceId = randomId();
  private readonly ring: Ring<Entry>;
  private readonly http: HttpSettings;
  private batchSize: number;
  private recorded = 0;
  private sent = 0;
  private refused = 0;
  private dropped = 0;
  private invalid = 0;
  private inflight = 0;
  /** Entries at the front of the ring that the running drain is to send (all that was pending when it began). */
  private due = 0;
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The timer is set to send now (the count was reached), or to try again after a failure: not for the time. */
  private urgent = false;
  private busy: Promise<void> | undefined;
  private heartbeat: ReturnType<typeof setTimeout> | undefined;
  private closing: Promise<void> | undefined;
  private readonly warned = new Set<string>();
  /** The wait the last 429 (or 503) named, in ms: the next try comes after it rather than after the backoff. */
  private retryAfterMs: number | undefined;
  /** What reads outside the memory served (mode `none`, `cache: false`), per prompt and label. */
  private readonly unheld = new Map<string, ReadRef>();

  private readonly settings: OutcomeSettings;

  constructor(
    http: HttpSettings,
    options: PromptstoreOptions,
    private readonly held: () => PromptView[],
    private readonly hooks: Hooks,
  ) {
    this.settings = settingsOf(options);
    const { settings } = this;
    this.http = { ...http, retries: 0 };
    this.batchSize = settings.batchSize;
    this.ring = new Ring(settings.bufferSize);
    if (settings.reportServing) this.beatIn(settings.heartbeatMs);
  }

  // ---------------------------------------------------------------- the application's thread

  /** Never throws: a getter of the caller's object that throws, say, loses that outcome, told to onError. */
  record(read: unknown, outcome: OutcomeReport): void {
    try {
      this.keep(read, outcome);
    } catch (error) {
      this.invalid++;
      this.hooks.error(error);
    }
  }

  private keep(read: unknown, outcome: OutcomeReport): void {
    const ref = readRef(read);
    const entry = typeof ref === "string" ? ref : entryOf(ref, outcome, Date.now());
    if (typeof entry === "string") {
      this.refuse(entry);
      return;
    }
    this.recorded++;
    if (this.closing !== undefined) {
      this.dropped++;
      return;
    }
    if (this.ring.push(entry)) {
      this.dropped++;
      if (this.due > 0) this.due--;
    }
    if (this.busy === undefined) {
      if (this.timer === undefined) this.wake(this.settings.flushIntervalMs, "all");
      if (this.ring.size >= this.batchSize && !this.urgent) this.wake(0, "count");
    }
  }

  /** A read served outside the memory: what the fleet report says this instance serves. */
  served(read: PromptView): void {
    const ref = readRef(read);
    if (typeof ref === "string") return;
    const key = `${ref.prompt}\u0000${ref.label ?? ""}`;
    if (this.unheld.size < LIMITS.serving || this.unheld.has(key)) this.unheld.set(key, ref);
  }

  /** The options the memory is given: with reportServing, a change of what is served is reported soon. */
  memoryOptions(options: PromptstoreOptions): PromptstoreOptions {
    if (!this.settings.reportServing) return options;
    const onChange = options.onChange;
    return {
      ...options,
      onChange: (change) => {
        this.servingChanged();
        onChange?.(change);
      },
    };
  }

  /** What this instance serves changed: reported soon (reportServing), not only at the next heartbeat. */
  private servingChanged(): void {
    if (this.settings.reportServing && this.closing === undefined) {
      this.beatIn(Math.min(1_000, this.settings.heartbeatMs));
    }
  }

  stats(): OutcomeStats {
    return {
      recorded: this.recorded,
      sent: this.sent,
      refused: this.refused,
      dropped: this.dropped,
      invalid: this.invalid,
      pending: this.ring.size + this.inflight,
    };
  }

  /** Sends what is pending now, and resolves when it is sent or could not be (it then stays pending). */
  async flush(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    await this.busy;
    if (this.ring.size === 0) return;
    this.stopTimer();
    await this.run("all");
  }

  /** Stops every timer, sends what is pending once, and counts what could not be sent as dropped. Never rejects. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.stopTimer();
    if (this.heartbeat !== undefined) clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
    const busy = this.busy;
    this.closing = (async () => {
      await busy;
      if (this.ring.size > 0) await this.drain("final");
      const left = this.ring.take(this.ring.size).length;
      this.dropped += left;
    })();
    return this.closing;
  }

  /**
   * What this instance serves, one version per prompt and label (none for reads by version or latest): the
   * version of the read held; in a rollout, the candidate (every instance serves both arms, and the candidate is
   * what shows that it has the rollout, and after an abort that it no longer does); then reads outside memory.
   */
  serving(): Serving[] {
    const found = new Map<string, Serving>();
    const held = this.held();
    // A rollout's other arm is held by its hash (rollout.ts): it is the label's, not a read by version.
    const arms = new Set<string>();
    for (const read of held) {
      const other = otherArmVersion(read);
      if (other !== undefined) arms.add(`${read.id}\u0000${other}`);
    }
    for (const read of held) {
      const label = wireLabel(read.label);
      const version = read.rollout?.candidate ?? read.version;
      if (label === null || !FULL_HASH.test(version)) continue;
      const key = `${read.id}\u0000${label ?? ""}`;
      if (label === undefined) {
        if (arms.has(`${read.id}\u0000${read.version}`)) continue;
        // A read of latest says more than one pinned to a hash.
        if (found.has(key) && read.label !== "latest") continue;
      }
      found.set(key, label === undefined ? { prompt: read.id, version } : { prompt: read.id, label, version });
    }
    for (const [key, ref] of this.unheld) {
      if (found.has(key)) continue;
      found.set(
        key,
        ref.label === undefined
          ? { prompt: ref.prompt, version: ref.version }
          : { prompt: ref.prompt, label: ref.label, version: ref.version },
      );
    }
    return [...found.values()].slice(0, LIMITS.serving);
  }

  // ---------------------------------------------------------------- in the background

  private refuse(problem: string): void {
    this.invalid++;
    if (this.warned.has(problem)) return;
    this.warned.add(problem);
    this.hooks.error(
      new PromptstoreError(`record(): ${problem}; the outcome was not kept`, { status: 0, code: "invalid_outcome" }),
    );
  }

  /** Sets the one timer: a drain in `ms`; `count` and a retry (`all` after a failure) are urgent, the time is not. */
  private wake(ms: number, drain: "count" | "all", urgent = drain === "count"): void {
    this.stopTimer();
    this.urgent = urgent;
    this.timer = unref(
      setTimeout(() => {
        this.timer = undefined;
        this.urgent = false;
        void this.run(drain);
      }, ms),
    );
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.urgent = false;
  }

  private beatIn(ms: number): void {
    if (this.heartbeat !== undefined) clearTimeout(this.heartbeat);
    this.heartbeat = unref(
      setTimeout(() => {
        this.heartbeat = undefined;
        // While a batch is sent, it carries the report; while the server is away, the retry will.
        if (this.busy !== undefined || this.urgent) this.beatIn(this.settings.heartbeatMs);
        else void this.run("heartbeat");
      }, ms),
    );
  }

  private run(drain: Drain): Promise<void> {
    if (this.busy !== undefined) return this.busy;
    this.busy = this.drain(drain).finally(() => {
      this.busy = undefined;
      if (this.closing === undefined && this.timer === undefined && this.ring.size > 0) {
        if (this.ring.size >= this.batchSize) this.wake(0, "count");
        else this.wake(this.settings.flushIntervalMs, "all");
      }
    });
    return this.busy;
  }

  /**
   * Sends, a batch at a time, full batches, and (unless `count`) all that was pending when it began; a
   * heartbeat sends its report even with no outcome. It stops at a failure: the batch goes back to the front
   * and (unless `final`) the timer is set to try again after the backoff or the wait a 429 named.
   */
  private async drain(drain: Drain): Promise<void> {
    const heartbeat = drain === "heartbeat";
    this.due = drain === "count" ? 0 : this.ring.size;
    let reported = false;
    while (this.ring.size >= this.batchSize || this.due > 0 || (heartbeat && !reported)) {
      const serving = this.serving();
      if (this.ring.size === 0 && serving.length === 0) break;
      const batch = this.ring.take(this.batchSize);
      this.due = Math.max(0, this.due - batch.length);
      this.inflight = batch.length;
      const verdict = await this.send(batch, serving);
      this.inflight = 0;
      reported = true;
      if (verdict === "done") {
        this.failures = 0;
        continue;
      }
      const left = this.ring.unshift(batch);
      this.dropped += left;
      this.due += batch.length - left;
      if (verdict === "smaller") continue;
      if (drain !== "final") this.wake(this.retryDelay(), "all", true);
      return;
    }
    if (this.settings.reportServing && this.closing === undefined && (reported || heartbeat)) {
      this.beatIn(this.settings.heartbeatMs);
    }
  }

  private retryDelay(): number {
    this.failures++;
    const asked = this.retryAfterMs;
    this.retryAfterMs = undefined;
    if (asked !== undefined) return Math.min(asked, this.http.maxRetryAfterMs);
    const step = Math.min(this.settings.maxRetryDelayMs, this.settings.retryDelayMs * 2 ** (this.failures - 1));
    // Half fixed, half random: clients that lost the same server do not come back in step.
    return step / 2 + (Math.random() * step) / 2;
  }

  /** One batch, one request; never rejects. */
  private async send(batch: Entry[], serving: Serving[]): Promise<Verdict> {
    // Written by hand: the outcomes' JSON is most of the sending's cost (outcome.ts).
    const instance = JSON.stringify({ id: this.instanceId, sdk: SDK, serving });
    const body = `{"outcomes":[${batch.map(outcomeJson).join(",")}],"instance":${instance}}`;
    try {
      const { data } = await request<{ accepted?: unknown; refused?: unknown }>(this.http, "POST", "/api/v2/outcomes", {
        raw: { data: body, type: "application/json" },
        idempotent: true,
      });
      const refused = Array.isArray(data?.refused) ? Math.min(data.refused.length, batch.length) : 0;
      this.refused += refused;
      this.sent += batch.length - refused;
      return "done";
    } catch (error) {
      this.hooks.error(error);
      const status = error instanceof PromptstoreError ? error.status : 0;
      if (status === 413 && batch.length > 1) {
        this.batchSize = Math.max(1, Math.floor(batch.length / 2));
        return "smaller";
      }
      if (status === 0 || status === 408 || status === 429 || status >= 500) {
        const wait = error instanceof PromptstoreError ? error.retryAfter : undefined;
        this.retryAfterMs = wait === undefined ? undefined : wait * 1000;
        return "retry";
      }
      // Refused whole (400, 401, 403, 404, 413 of one outcome): sending it again would be refused again.
      this.refused += batch.length;
      return "done";
    }
  }
}
