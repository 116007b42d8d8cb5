/**
 * How an evaluation paces its model calls (docs/evaluations.md, "How an evaluation runs"): at most so many at
 * once (`Slots`), all of them held back after a 429 (`Pause`), and how long to wait before asking again.
 */
import { type ModelAnswer, ProviderError, RunStopped } from "../playground/model-call.js";

/** What the pacing reads of the runner's options. */
export interface RetryOptions {
  /** A cell is asked this many times at most while the provider says 429. */
  maxAttempts: number;
  /** The first backoff after a 429 without Retry-After; it doubles, with jitter, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 10, backoffMs: 1_000, maxBackoffMs: 60_000 };

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** One pause for the whole evaluation: after a 429, no call of it goes out before the provider's time. */
export class Pause {
  private until = 0;

  set(ms: number): void {
    this.until = Math.max(this.until, Date.now() + ms);
  }

  async wait(signal: AbortSignal): Promise<void> {
    for (let left = this.until - Date.now(); left > 0 && !signal.aborted; left = this.until - Date.now()) {
      await sleep(left, signal);
    }
  }
}

/** At most `size` at once; `acquire` resolves false when the signal ended the wait. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const take = () => {
        signal.removeEventListener("abort", give);
        resolve(true);
      };
      const give = () => {
        const at = this.waiting.indexOf(take);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      };
      this.waiting.push(take);
      signal.addEventListener("abort", give, { once: true });
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/** How long to wait before asking again after a provider's failure, or null when the failure stands. */
export function retryWait(error: ProviderError, attempt: number, options: RetryOptions): number | null {
  const retryable = error.code === "provider_rate_limited" || (error.status === 503 && error.retryAfterMs !== null);
  if (!retryable || attempt >= options.maxAttempts) return null;
  if (error.retryAfterMs !== null) return error.retryAfterMs;
  const ceiling = Math.min(options.backoffMs * 2 ** (attempt - 1), options.maxBackoffMs);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * A model call that obeys the provider's 429 (and a 503's Retry-After) as an evaluation's cells do: a judge's
 * calls go through it, so a rate-limited judge slows down instead of failing its check.
 */
export async function callWithRetries(
  call: () => Promise<ModelAnswer>,
  signal: AbortSignal,
  options: RetryOptions = DEFAULT_RETRY,
): Promise<ModelAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      const wait = retryWait(error, attempt, options);
      if (wait === null) throw error;
      await sleep(wait, signal);
      if (signal.aborted) throw new RunStopped();
    }
  }
}
