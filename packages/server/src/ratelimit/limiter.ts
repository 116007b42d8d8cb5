/** The answer of a limiter for one request. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets, at least 1. */
  resetSeconds: number;
}

/**
 * Counts requests per key in fixed windows. In-process by default; an implementation shared by every
 * instance (Redis, PostgreSQL) makes the limit hold across a fleet.
 */
export interface RateLimiter {
  /** Where the counts live: `memory` (this process), `redis` or `postgres` (shared by every instance). */
  readonly kind: "memory" | "redis" | "postgres";
  consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision>;
  /** The current state without counting a request. */
  peek(key: string, limit: number, windowSeconds: number): Promise<RateDecision>;
  /**
   * Gives back one request counted by `consume` in the current window (an attempt that turned out not to
   * count); nothing when the window has ended meanwhile, so a window never starts below zero.
   */
  giveBack(key: string, limit: number, windowSeconds: number): Promise<void>;
  close(): Promise<void>;
}
