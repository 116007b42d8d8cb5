import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";
import type { AuthorizationService, AuthorizeParams } from "../../service/oauth/authorization.js";
import type { ClientRegistry } from "../../service/oauth/client-registry.js";
import { OAuthFailure, ShownFailure } from "../../service/oauth/errors.js";
import { allowAnyOrigin } from "./metadata-routes.js";
import { siteOf } from "./site.js";

/** Where the dashboard shows a pending request (packages/dashboard/src/oauth). */
export const CONSENT_PATH = "/oauth/consent";

/** Per client address: registrations an hour, token requests a minute. */
export const OAUTH_LIMITS = {
  register: { requests: 20, windowSeconds: 3600 },
  token: { requests: 60, windowSeconds: 60 },
} as const;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

/** A refusal shown to the person (never redirected): a plain page that says what is wrong. */
function showRefusal(reply: FastifyReply, message: string) {
  return reply
    .code(400)
    .type("text/html; charset=utf-8")
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in request refused · Promptstore</title></head>` +
        `<body><main><h1>This sign-in request cannot be used</h1><p>${escapeHtml(message)}</p>` +
        `<p>Go back to the app that sent you here and connect again. If it keeps happening, the app's settings for this server are wrong.</p></main></body></html>`,
    );
}

/** An OAuth endpoint's refusal in the shape OAuth clients read (RFC 6749 5.2), with `success: false` beside it. */
function oauthError(reply: FastifyReply, failure: OAuthFailure) {
  return reply
    .code(failure.status)
    .send({ success: false, error: failure.error, error_description: failure.description });
}

const single = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * A form body as its fields; a field sent twice is refused (RFC 6749 3.2), an absent body is no fields.
 * The form parser (app.ts) hands the body over as text.
 */
function formFields(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "string")
    throw new OAuthFailure("invalid_request", "body: must be application/x-www-form-urlencoded");
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(fields, name)) throw new OAuthFailure("invalid_request", `${name}: sent more than once`);
    fields[name] = value;
  }
  return fields;
}

/** A public client names itself in the body, or as the user name of HTTP Basic with an empty password. */
function clientIdOf(request: FastifyRequest, fields: Record<string, string>): string | undefined {
  if (fields.client_id !== undefined) return fields.client_id;
  const header = request.headers.authorization;
  if (typeof header !== "string" || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  try {
    return decodeURIComponent(colon < 0 ? decoded : decoded.slice(0, colon));
  } catch {
    throw new OAuthFailure("invalid_client", "authorization: the Basic credentials are not valid");
  }
}

export interface OAuthRouteDeps {
  authorization: AuthorizationService;
  clients: ClientRegistry;
  limiter: RateLimiter;
  publicUrl: string | undefined;
}

/** The authorization server's endpoints: authorize (to the dashboard's consent), token, register, revoke. */
export function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): void {
  const { authorization, clients, limiter, publicUrl } = deps;

  const limit = async (request: FastifyRequest, reply: FastifyReply, kind: keyof typeof OAUTH_LIMITS) => {
    const { requests, windowSeconds } = OAUTH_LIMITS[kind];
    const decision = await limiter.consume(`oauth-${kind}:${request.ip}`, requests, windowSeconds);
    if (!decision.allowed) {
      reply.header("retry-after", decision.resetSeconds);
      throw new AppError(
        "rate_limited",
        `too many ${kind === "register" ? "registrations" : "token requests"}; retry in ${decision.resetSeconds} s`,
      );
    }
  };

  app.get("/oauth/authorize", async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const params: AuthorizeParams = {};
    for (const name of [
      "response_type",
      "client_id",
      "redirect_uri",
      "state",
      "code_challenge",
      "code_challenge_method",
      "scope",
      "resource",
    ] as const) {
      const value = query[name];
      if (Array.isArray(value)) return showRefusal(reply, `${name}: sent more than once`);
      params[name] = single(value);
    }
    try {
      const outcome = await authorization.authorize(params, siteOf(request, publicUrl));
      if ("redirect" in outcome) return reply.redirect(outcome.redirect, 302);
      return reply.redirect(`${CONSENT_PATH}?${new URLSearchParams({ request: outcome.requestId })}`, 302);
    } catch (error) {
      if (error instanceof ShownFailure) return showRefusal(reply, error.message);
      throw error;
    }
  });

  const answer = async (reply: FastifyReply, work: () => Promise<unknown>) => {
    allowAnyOrigin(reply);
    try {
      return await work();
    } catch (error) {
      if (error instanceof OAuthFailure) return oauthError(reply, error);
      throw error;
    }
  };

  app.post("/oauth/token", async (request, reply) => {
    await limit(request, reply, "token");
    return answer(reply, async () => {
      const fields = formFields(request.body);
      const site = siteOf(request, publicUrl);
      const clientId = clientIdOf(request, fields);
      switch (fields.grant_type) {
        case "authorization_code":
          return authorization.exchangeCode({ ...fields, client_id: clientId } as never, site);
        case "refresh_token":
          return authorization.refresh({ ...fields, client_id: clientId } as never, site);
        case undefined:
          throw new OAuthFailure("invalid_request", "grant_type: required");
        default:
          throw new OAuthFailure("unsupported_grant_type", "grant_type: must be authorization_code or refresh_token");
      }
    });
  });

  app.post("/oauth/register", async (request, reply) => {
    await limit(request, reply, "register");
    return answer(reply, async () => {
      const registered = await clients.register(request.body);
      reply.code(201);
      return registered;
    });
  });

  app.post("/oauth/revoke", async (request, reply) => {
    await limit(request, reply, "token");
    return answer(reply, async () => {
      const fields = formFields(request.body);
      await authorization.revokeToken(fields.token, clientIdOf(request, fields));
      return {};
    });
  });

  // CORS preflight of browser-based clients.
  for (const path of [
    "/oauth/token",
    "/oauth/register",
    "/oauth/revoke",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/api/v2/mcp",
  ]) {
    app.options(path, async (_request, reply) => {
      allowAnyOrigin(reply);
      reply.header("access-control-max-age", "600");
      return reply.code(204).send();
    });
  }
}
