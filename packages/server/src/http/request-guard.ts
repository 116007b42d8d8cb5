import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { RateLimiter } from "../ratelimit/limiter.js";
import type { KeyCache } from "../service/key-cache.js";
import { type AuthHooks, authenticate, grantToCaller } from "./auth.js";
import { countRequest, requestsPerMinute } from "./rate-limit.js";
import { v1InvalidKeyThrottle } from "./v1-throttle.js";

export interface GuardDeps {
  keys: KeyCache;
  limiter: RateLimiter;
  /** Throws a 403 AppError when the request's Origin is not allowed. */
  checkOrigin: (request: FastifyRequest) => void;
}

const NO_AUTH_HOOKS: AuthHooks = {};

/**
 * Routes declare what guards them (`config.auth`, `config.mcp`) and get their hooks when they are
 * registered, so no request pays for looking that up (Fastify builds a new routeOptions object on
 * every access). Must be called before the routes are registered.
 */
export function guardRoutes(app: FastifyInstance, deps: GuardDeps): void {
  const v1Throttle = v1InvalidKeyThrottle(deps.limiter);

  const authHook = (v1: boolean): onRequestHookHandler => {
    const hooks = v1 ? v1Throttle : NO_AUTH_HOOKS;
    const guard = async (request: FastifyRequest, reply: FastifyReply) => {
      await authenticate(request, reply, (key) => deps.keys.resolve(key), hooks);
      await countRequest(request, reply, deps.limiter);
    };
    // Callback style, so the common case (a cached key of an unlimited plan) passes without a promise.
    // v1 always takes the full path: its invalid-key throttle must see every request.
    return (request, reply, done) => {
      const key = request.headers["x-api-key"];
      const cached = !v1 && typeof key === "string" ? deps.keys.peek(key) : undefined;
      if (cached && requestsPerMinute(cached.plan) === null) {
        request.caller = grantToCaller(cached);
        return done();
      }
      guard(request, reply).then(() => done(), done);
    };
  };
  const v1Auth = authHook(true);
  const v2Auth = authHook(false);
  // MCP clients that know OAuth (the MCP Inspector, mcp-remote, the SDK with an auth provider) start an OAuth
  // sign-in on any 401, whatever WWW-Authenticate says, and report that instead of the key being wrong; a
  // 403 with the same message reaches the user as it is. The API key is no HTTP authentication scheme a
  // client could answer a challenge with, so the refusal is a 403 (docs/decisions.md, "MCP at /api/v2/mcp").
  const mcpAuth: onRequestHookHandler = function (request, reply, done) {
    v2Auth.call(this, request, reply, (error?: Error) => {
      if (error instanceof AppError && error.status === 401) return done(new AppError("forbidden", error.message));
      done(error);
    });
  };
  const originHook: onRequestHookHandler = (request, _reply, done) => {
    try {
      deps.checkOrigin(request);
    } catch (error) {
      return done(error as Error);
    }
    done();
  };

  app.addHook("onRoute", (route) => {
    const guards: onRequestHookHandler[] = [];
    if (route.config?.mcp) guards.push(originHook);
    if (route.config?.auth) {
      guards.push(route.url.startsWith("/api/v1/") ? v1Auth : route.config.mcp ? mcpAuth : v2Auth);
    }
    if (guards.length === 0) return;
    const own =
      route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...guards, ...own];
  });
}
