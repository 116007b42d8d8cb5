import { AppError } from "@promptstore/core/errors";
import type { FastifyReply } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";

/**
 * Password checks (signing in, and the current password on the password form) are limited per client address
 * (all attempts) and per account (failures), in the same limiter as the API (shared across instances when
 * that one is). An account that failed too often is refused even with the right password until its window
 * ends; unknown e-mails are counted the same way, so the throttle does not tell which e-mails have accounts.
 *
 * A slot is taken before the password is checked, in one atomic count, and given back only by a success: of
 * attempts made in parallel, no more than the limit are ever checked (issue 35).
 */
export const SIGN_IN_LIMITS = {
  perAddress: { attempts: 20, windowSeconds: 300 },
  perAccount: { failures: 5, windowSeconds: 900 },
} as const;

/** An admitted attempt: `giveBack` returns its account slot (a success, or no guess at all), so only failures stay counted. */
export interface Attempt {
  giveBack(): Promise<void>;
}

export class SignInThrottle {
  constructor(private readonly limiter: RateLimiter) {}

  private refuse(reply: FastifyReply, seconds: number): never {
    reply.header("retry-after", seconds);
    throw new AppError("rate_limited", `too many sign-in attempts; retry in ${seconds} s`);
  }

  /**
   * Counts the attempt against the client's address and then takes one of the account's failure slots;
   * refuses when either is used up. Signing in and the password form share both counts: a guess is a guess.
   */
  async admit(reply: FastifyReply, address: string, email: string): Promise<Attempt> {
    const { perAddress, perAccount } = SIGN_IN_LIMITS;
    const byAddress = await this.limiter.consume(`signin-ip:${address}`, perAddress.attempts, perAddress.windowSeconds);
    if (!byAddress.allowed) this.refuse(reply, byAddress.resetSeconds);
    const key = `signin-account:${email}`;
    const byAccount = await this.limiter.consume(key, perAccount.failures, perAccount.windowSeconds);
    if (!byAccount.allowed) this.refuse(reply, byAccount.resetSeconds);
    return { giveBack: () => this.limiter.giveBack(key, perAccount.failures, perAccount.windowSeconds) };
  }
}
