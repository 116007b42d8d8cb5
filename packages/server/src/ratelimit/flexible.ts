import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { RateDecision, RateLimiter } from "./limiter.js";

export type LimiterFactory = (options: { points: number; duration: number; keyPrefix: string }) => RateLimiterAbstract;

const decision = (res: RateLimiterRes, limit: number, allowed: boolean): RateDecision => ({
  allowed,
  limit,
  remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
  resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
});

/** A RateLimiter over rate-limiter-flexible; the factory picks the backend (memory, Redis, PostgreSQL). */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    readonly kind: RateLimiter["kind"],
    private readonly factory: LimiterFactory,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  private limiter(limit: number, windowSeconds: number): RateLimiterAbstract {
    const id = `${limit}/${windowSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = this.factory({ points: limit, duration: windowSeconds, keyPrefix: `ps_rl_${limit}_${windowSeconds}` });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  async consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    try {
      return decision(await this.limiter(limit, windowSeconds).consume(key), limit, true);
    } catch (error) {
      if (error instanceof RateLimiterRes) return decision(error, limit, false);
      throw error;
    }
  }

  async peek(key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const res = await this.limiter(limit, windowSeconds).get(key);
    if (!res) return { allowed: true, limit, remaining: limit, resetSeconds: windowSeconds };
    return decision(res, limit, res.consumedPoints < limit);
  }

  async giveBack(key: string, limit: number, windowSeconds: number): Promise<void> {
    const limiter = this.limiter(limit, windowSeconds);
    // Not atomic with the reward, but only a window ending in between can slip through: then the new
    // window allows one request more, never more than that.
    const current = await limiter.get(key);
    if (current && current.consumedPoints > 0) await limiter.reward(key, 1);
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

export const memoryRateLimiter = (): RateLimiter =>
  new FlexibleRateLimiter("memory", (options) => new RateLimiterMemory(options));
