import { AppError } from "@promptstore/core/errors";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";

const MAX_INVALID = 10;
const WINDOW_SECONDS = 60;

function refuse(reply: FastifyReply, resetSeconds: number): never {
  reply.headers({
    "retry-after": resetSeconds,
    "x-ratelimit-limit": MAX_INVALID,
    "x-ratelimit-remaining": 0,
    "x-ratelimit-reset": resetSeconds,
  });
  throw new AppError("rate_limited", `too many invalid API keys from this address; retry in ${resetSeconds} s`);
}

/**
 * v1 clients that send more than 10 missing or invalid keys in a minute are refused with 429 until
 * that minute is over, before their key is even looked at, so guessing keys stops paying. Used for v1
 * requests only.
 */
export function v1InvalidKeyThrottle(limiter: RateLimiter) {
  const key = (request: FastifyRequest) => `v1-invalid:${request.ip}`;
  return {
    async beforeAuth(request: FastifyRequest, reply: FastifyReply) {
      const state = await limiter.peek(key(request), MAX_INVALID, WINDOW_SECONDS);
      if (!state.allowed) refuse(reply, state.resetSeconds);
    },
    async onInvalidKey(request: FastifyRequest) {
      await limiter.consume(key(request), MAX_INVALID, WINDOW_SECONDS);
    },
  };
}
