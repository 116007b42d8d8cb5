import { AppError } from "@promptstore/core/errors";
import type { FastifyReply } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";

/**
 * Sign-in attempts are limited per client address (all attempts) and per account (failures), in the same
 * limiter as the API (shared across instances when that one is). An account that failed too often is
 * refused even with the right password until its window ends; unknown e-mails are counted the same way,
 * so the throttle does not tell which e-mails have accounts. A wrong current password on the password form
 * is a failure of the account too.
 */
export const SIGN_IN_LIMITS = {
  perAddress: { attempts: 20, windowSeconds: 300 },
  perAccount: { failures: 5, windowSeconds: 900 },
} as const;

export class SignInThrottle {
  constructor(private readonly limiter: RateLimiter) {}

  private refuse(reply: FastifyReply, seconds: number): never {
    reply.header("retry-after", seconds);
    throw new AppError("rate_limited", `too many sign-in attempts; retry in ${seconds} s`);
  }

  /** Counts the attempt against the address; refuses when the address or the account is over its limit. */
  async admit(reply: FastifyReply, address: string, email: string): Promise<void> {
    const { perAddress } = SIGN_IN_LIMITS;
    const byAddress = await this.limiter.consume(`signin-ip:${address}`, perAddress.attempts, perAddress.windowSeconds);
    if (!byAddress.allowed) this.refuse(reply, byAddress.resetSeconds);
    await this.admitAccount(reply, email);
  }

  /**
   * Refuses while the account is locked. The password form asks this too: checking a current password is
   * guessing it as surely as signing in is, so both count against, and are stopped by, the same lock.
   */
  async admitAccount(reply: FastifyReply, email: string): Promise<void> {
    const { perAccount } = SIGN_IN_LIMITS;
    const byAccount = await this.limiter.peek(`signin-account:${email}`, perAccount.failures, perAccount.windowSeconds);
    if (byAccount.remaining <= 0) this.refuse(reply, byAccount.resetSeconds);
  }

  async failed(email: string): Promise<void> {
    const { perAccount } = SIGN_IN_LIMITS;
    await this.limiter.consume(`signin-account:${email}`, perAccount.failures, perAccount.windowSeconds);
  }
}
