import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";
import type { KeyCache } from "../../service/accounts/key-cache.js";
import { bearerToken, type McpBearer } from "../oauth/bearer.js";
import { type AuthHooks, authenticate, grantToCaller } from "./auth.js";
import { countRequest, requestsPerMinute } from "./rate-limit.js";
import { v1InvalidKeyThrottle } from "./v1-throttle.js";

export interface GuardDeps {
  keys: KeyCache;
  limiter: RateLimiter;
  /** Throws a 403 AppError when the request's Origin is not allowed. */
  checkOrigin: (request: FastifyRequest) => void;
  /** The MCP endpoint's OAuth side: bearer tokens, and the challenge of its 401s. */
  bearer: McpBearer;
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
  // The MCP endpoint takes the project key (x-api-key, exactly as the REST API) or an MCP client's OAuth
  // token (Authorization: Bearer); a missing or invalid credential is the contract's 401, whose
  // WWW-Authenticate leads OAuth clients to the sign-in (docs/decisions.md, "MCP at /api/v2/mcp"). A key
  // that works decides; a bearer token sent beside a key that does not (a client that signed in after its
  // configured key was refused) is tried next.
  const mcpAuth: onRequestHookHandler = function (request, reply, done) {
    const token = bearerToken(request);
    const withToken = (token: string) =>
      deps.bearer
        .authenticate(request, reply, token)
        .then(() => countRequest(request, reply, deps.limiter))
        .then(() => done(), done);
    if (token !== undefined && request.headers["x-api-key"] === undefined) return void withToken(token);
    v2Auth.call(this, request, reply, (error?: Error) => {
      if (error instanceof AppError && error.status === 401) {
        if (token !== undefined) return void withToken(token);
        try {
          deps.bearer.challenge(request, reply);
        } catch (failure) {
          // Never left unanswered: a challenge that cannot be written is the server's fault, answered as one.
          return done(failure as Error);
        }
      }
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
