import { timingSafeEqual } from "node:crypto";
import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { AccountService, SessionState } from "../../service/accounts/account-service.js";
import type { User } from "../../store/accounts/accounts.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The session of a dashboard route (`config.session`): its user and CSRF token. */
    account: SessionState | null;
  }
  interface FastifyContextConfig {
    /** Dashboard routes: a session cookie instead of an API key; mutations also need the CSRF token. */
    session?: boolean;
    /** Reachable while the account still has a one-time password (reading the session, choosing a password). */
    beforePasswordChange?: boolean;
  }
}

export const SESSION_COOKIE = "ps_session";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The session cookie: HTTP-only, SameSite=Lax, Secure when the request came over HTTPS. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeMs: number): void {
  reply.setCookie(SESSION_COOKIE, token, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: request.protocol === "https",
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: request.protocol === "https",
  });
}

export function sessionToken(app: FastifyInstance, request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  const token = app.parseCookie(header)[SESSION_COOKIE];
  return token && token.length <= 100 ? token : undefined;
}

/**
 * A browser that names another origin is refused before anything else: with the SameSite cookie and the
 * CSRF token this is the third fence around a mutation, and the only one around sign-in.
 */
export function checkSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let named: URL;
  try {
    named = new URL(origin);
  } catch {
    throw new AppError("forbidden", "origin: is not this server");
  }
  // Scheme, host and port, as browsers define an origin: a page served over plain http is another origin
  // than the https one. request.protocol and request.host are what the client used: behind a trusted proxy
  // (PROMPTSTORE_TRUST_PROXY), X-Forwarded-Proto and X-Forwarded-Host.
  if (named.host !== request.host || named.protocol !== `${request.protocol}:`) {
    throw new AppError("forbidden", "origin: is not this server");
  }
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Attaches the session check to every route that declares `config.session`. Call before registering them. */
export function guardSessionRoutes(app: FastifyInstance, accounts: AccountService): void {
  app.decorateRequest("account", null);
  const hook =
    (beforePasswordChange: boolean): onRequestHookHandler =>
    async (request, reply) => {
      const mutation = !SAFE_METHODS.has(request.method);
      if (mutation) checkSameOrigin(request);
      const token = sessionToken(app, request);
      const session = token === undefined ? undefined : await accounts.session(token);
      if (!session) {
        if (token !== undefined) clearSessionCookie(request, reply);
        throw new AppError("unauthorized", "session: not signed in, or the session has ended; sign in again");
      }
      if (mutation) {
        const given = request.headers["x-csrf-token"];
        if (typeof given !== "string" || !sameToken(given, session.csrfToken)) {
          throw new AppError("forbidden", "x-csrf-token: missing or wrong CSRF token; reload the page");
        }
      }
      // A one-time password opens the door to choosing a real one, and to nothing else.
      if (session.user.must_change_password && !beforePasswordChange) {
        throw new AppError("forbidden", "password: choose a new password first (POST /api/dashboard/password)");
      }
      request.account = session;
    };
  app.addHook("onRoute", (route) => {
    if (!route.config?.session) return;
    const own =
      route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [hook(route.config.beforePasswordChange === true), ...own];
  });
}

export function accountOf(request: FastifyRequest): SessionState {
  if (!request.account) throw new AppError("unauthorized", "session: not signed in");
  return request.account;
}

export const userOf = (request: FastifyRequest): User => accountOf(request).user;
