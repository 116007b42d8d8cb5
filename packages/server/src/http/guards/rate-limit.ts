import { planLimits } from "@promptstore/core/accounts/plans";
import { AppError } from "@promptstore/core/errors";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";

export const RATE_WINDOW_SECONDS = 60;

/** The limiter key of an organization's request budget. */
export const rateLimitKey = (orgId: string) => `org:${orgId}`;

/** The plan's budget per minute; null when the plan has none (or unknown plans, as free). */
export function requestsPerMinute(plan: string): number | null {
  return planLimits(plan).requestsPerMinute;
}

/**
 * Counts an authenticated request against its organization's per-minute budget (it needs the
 * organization, so it runs after auth); every counted response carries the X-RateLimit-* headers.
 */
export async function countRequest(request: FastifyRequest, reply: FastifyReply, limiter: RateLimiter): Promise<void> {
  const caller = request.caller;
  if (!caller) return;
  const limit = requestsPerMinute(caller.plan);
  if (limit === null) return;
  const decision = await limiter.consume(rateLimitKey(caller.orgId), limit, RATE_WINDOW_SECONDS);
  reply.header("x-ratelimit-limit", decision.limit);
  reply.header("x-ratelimit-remaining", decision.remaining);
  reply.header("x-ratelimit-reset", decision.resetSeconds);
  if (!decision.allowed) {
    reply.header("retry-after", decision.resetSeconds);
    throw new AppError(
      "rate_limited",
      `rate limit exceeded: the ${caller.plan} plan allows ${limit} requests per minute; retry in ${decision.resetSeconds} s`,
    );
  }
}
