import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { SecretUnreadable } from "../../secrets/secret-box.js";
import { DatabaseUnavailable } from "../../store/faults.js";
import type { AttemptOutcome, WebhookStore } from "../../store/webhooks.js";
import type { ChangeBus } from "../events/change-bus.js";
import type { Resolver } from "../webhook-address.js";
import { unreadableReason, type WebhookSecrets } from "./webhook-secrets.js";
import { type Attempt, sendWebhook } from "./webhook-sender.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait after the 1st, 2nd, … failed attempt; the last one repeats. */
export const RETRY_SCHEDULE_MS = [
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
] as const;
/** A delivery whose attempt fails this long after its first attempt has failed for good. */
export const RETRY_WINDOW_MS = 24 * HOUR;
/** Each wait is stretched or shrunk by up to this fraction, so endpoints that failed together spread out. */
export const JITTER = 0.2;
/** Delivered and failed deliveries are kept this long, then deleted. */
export const DELIVERY_RETENTION_MS = 7 * 24 * HOUR;
/** The first wait before recording an attempt's outcome again, doubling up to the second. */
const RECORD_RETRY_MS = 250;
const RECORD_RETRY_MAX_MS = 2 * SECOND;

export interface DispatcherOptions {
  /** Time limit of one attempt, connection to end of the (partly read) answer. */
  timeoutMs: number;
  allowPrivate: boolean;
  /** Multiplies every retry wait and the retry window (tests shrink them); 1 in production. */
  retryScale: number;
  /** Attempts in flight at once, per instance, each to a different endpoint. */
  concurrency?: number;
  /** The longest time between two looks at the database when nothing wakes the dispatcher. */
  pollMs?: number;
  resolver?: Resolver;
  random?: () => number;
  onError?: (error: unknown) => void;
}

/** When the attempt after `attempts` failed ones may start, or null when the delivery has failed for good. */
export function nextAttemptAt(
  firstAttemptAt: number,
  attemptedAt: number,
  attempts: number,
  scale: number,
  random: () => number = Math.random,
): number | null {
  if (attemptedAt - firstAttemptAt >= RETRY_WINDOW_MS * scale) return null;
  const base = RETRY_SCHEDULE_MS[Math.min(attempts, RETRY_SCHEDULE_MS.length) - 1] as number;
  const jitter = 1 - JITTER + 2 * JITTER * random();
  return attemptedAt + Math.round(base * scale * jitter);
}

interface InFlight {
  endpointId: string;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Works off the delivery queue, on every instance. Woken by the change bus (a change here, or on another
 * instance through LISTEN/NOTIFY) and by its own timer (the next retry that falls due, at the latest every
 * `pollMs`). It runs outside any request: a slow or failing endpoint never delays or fails a write.
 *
 * Ordering is strict per endpoint: only the oldest pending delivery of an endpoint is attempted, so event N+1
 * reaches an endpoint only once N has been delivered or has failed for good. An endpoint that is down holds
 * back its own queue (for up to the retry window) and no other endpoint's. Each attempt is claimed in the
 * database first (`locked_until`, a conditional update), so two instances never attempt the same delivery at
 * once; a claim held by an instance that died expires after three attempt timeouts.
 */
export class WebhookDispatcher {
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly lockMs: number;
  private readonly random: () => number;
  private readonly inFlight = new Map<number, InFlight>();
  private stopped = true;
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: WebhookStore,
    private readonly bus: ChangeBus,
    private readonly options: DispatcherOptions,
    private readonly secrets: WebhookSecrets,
  ) {
    this.concurrency = options.concurrency ?? 8;
    this.pollMs = options.pollMs ?? 5000;
    this.lockMs = Math.max(1000, 3 * options.timeoutMs);
    this.random = options.random ?? Math.random;
  }

  /** Picks up what is pending in the database (left by a previous run too), then keeps going. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.bus.subscribe((change) => {
      if (change.kind === "prompt" || change.kind === "events" || change.kind === "reset") this.wake();
    });
    const prune = () => {
      this.store
        .prune(new Date(Date.now() - DELIVERY_RETENTION_MS).toISOString())
        .catch((error) => this.options.onError?.(error));
    };
    prune();
    this.pruneTimer = setInterval(prune, HOUR);
    this.pruneTimer.unref();
    this.wake();
  }

  /** Stops looking, ends attempts in flight (they count as not made) and gives their deliveries back. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    clearInterval(this.pruneTimer);
    for (const attempt of this.inFlight.values()) attempt.controller.abort();
    await Promise.allSettled([...this.inFlight.values()].map((a) => a.done));
  }

  /** Look at the queue now (a change was committed, or an attempt ended). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = true;
    void this.run();
  }

  private async run(): Promise<void> {
    let wait = this.pollMs;
    try {
      // A wake while this runs (a commit, an attempt ending) means one more look before sleeping.
      do {
        this.again = false;
        await this.fill();
        if (!this.again) wait = await this.untilNext();
      } while (this.again && !this.stopped);
    } catch (error) {
      this.options.onError?.(error);
    }
    // Cleared here, with no await since the last look: cleared in a `finally` of the caller, a turn later, it let
    // a wake in between (an attempt ending) find the dispatcher still running, and wait for the timer.
    this.running = false;
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), wait);
    this.timer.unref();
  }

  /** Claims what is due, up to the free capacity, one delivery per endpoint, and starts the attempts. */
  private async fill(): Promise<void> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const now = Date.now();
    const nowIso = new Date(now).toISOString();
    const busy = [...new Set([...this.inFlight.values()].map((a) => a.endpointId))];
    for (const delivery of await this.store.due(nowIso, free, busy)) {
      if (this.stopped) return;
      const token = randomUUID();
      const claimEnds = now + this.lockMs;
      if (!(await this.store.claim(delivery.id, token, nowIso, new Date(claimEnds).toISOString()))) continue;
      const controller = new AbortController();
      const done = this.attempt(delivery, token, claimEnds, controller.signal)
        .catch((error) => this.options.onError?.(error))
        .finally(() => {
          this.inFlight.delete(delivery.id);
          this.wake();
        });
      this.inFlight.set(delivery.id, { endpointId: delivery.endpoint_id, controller, done });
    }
  }

  private async attempt(
    delivery: Awaited<ReturnType<WebhookStore["due"]>>[number],
    token: string,
    claimEnds: number,
    signal: AbortSignal,
  ): Promise<void> {
    const started = new Date();
    const secret = this.openSecret(delivery.endpoint_id, delivery.secret);
    // A secret that cannot sign is a failed attempt that sends nothing: it retries on the usual schedule,
    // and a rotation makes it due at once.
    const result: Attempt =
      typeof secret !== "string"
        ? secret
        : await sendWebhook(
            { url: delivery.url, secret },
            { id: `msg_${delivery.event_id}`, payload: delivery.payload },
            {
              timeoutMs: this.options.timeoutMs,
              allowPrivate: this.options.allowPrivate,
              signal,
              ...(this.options.resolver ? { resolver: this.options.resolver } : {}),
            },
          );
    if (signal.aborted) {
      await this.store.release(delivery.id, token);
      return;
    }
    const attemptedAt = Date.now();
    const first = delivery.first_attempt_at ?? started.toISOString();
    // A refused address is refused again next time: the delivery fails for good at once.
    const next =
      result.ok || result.refused
        ? null
        : nextAttemptAt(Date.parse(first), attemptedAt, delivery.attempts + 1, this.options.retryScale, this.random);
    await this.record(delivery.id, token, claimEnds, signal, {
      status: result.ok ? "delivered" : next === null ? "failed" : "pending",
      attempted_at: new Date(attemptedAt).toISOString(),
      first_attempt_at: first,
      response_code: result.status,
      error: result.error,
      next_attempt_at: next === null ? null : new Date(next).toISOString(),
    });
  }

  /**
   * Records an attempt's outcome. The database may be away for a moment just then (a restart, a full pool):
   * the outcome is known and the claim is still this instance's until `claimEnds`, so recording is tried
   * again until shortly before then. Given up, the claim expires and the message is sent again: at least
   * once, never lost. Left to expire at the first failure, a delivered message went out twice, and every
   * delivery behind it on the endpoint waited out the claim (30 s by default). Stopping (`signal`) ends the
   * wait at once: the claim then expires as it would have.
   */
  private async record(
    id: number,
    token: string,
    claimEnds: number,
    signal: AbortSignal,
    outcome: AttemptOutcome,
  ): Promise<void> {
    for (let wait = RECORD_RETRY_MS; ; wait = Math.min(2 * wait, RECORD_RETRY_MAX_MS)) {
      try {
        await this.store.complete(id, token, outcome);
        return;
      } catch (error) {
        if (!(error instanceof DatabaseUnavailable) || Date.now() + wait >= claimEnds) throw error;
        // The database's fault is what is reported (and not logged), not the abort that cut the wait short.
        await sleep(wait, undefined, { signal }).catch(() => {
          throw error;
        });
      }
    }
  }

  private openSecret(endpointId: string, stored: string): string | Attempt {
    try {
      return this.secrets.open(endpointId, stored);
    } catch (error) {
      if (!(error instanceof SecretUnreadable)) throw error;
      return { ok: false, status: null, error: `not sent: ${unreadableReason(error)}` };
    }
  }

  /** How long to sleep: until the next head falls due, at most `pollMs`. */
  private async untilNext(): Promise<number> {
    if (this.inFlight.size >= this.concurrency) return this.pollMs;
    const next = await this.store.nextDue();
    if (next === null) return this.pollMs;
    return Math.min(this.pollMs, Math.max(5, Date.parse(next) - Date.now()));
  }
}
