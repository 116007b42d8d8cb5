import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.js";
import type { RateLimiter } from "../../ratelimit/limiter.js";
import type { AccountService } from "../../service/accounts/account-service.js";
import { AuthorizationService } from "../../service/oauth/authorization.js";
import { ClientRegistry } from "../../service/oauth/client-registry.js";
import { ConnectedApps } from "../../service/oauth/connected-apps.js";
import type { DocumentFetchOptions } from "../../service/oauth/document-fetch.js";
import { TokenAccess } from "../../service/oauth/token-access.js";
import type { Store } from "../../store/index.js";
import { OAuthClientStore } from "../../store/oauth/clients.js";
import { OAuthGrantStore } from "../../store/oauth/grants.js";
import { OAuthRequestStore } from "../../store/oauth/requests.js";
import { registerOAuthRoutes } from "./authorize-routes.js";
import { mcpBearer } from "./bearer.js";
import { registerConsentRoutes } from "./consent-routes.js";
import { registerOAuthMetadataRoutes } from "./metadata-routes.js";

export interface OAuthOptions {
  store: Store;
  config: Config;
  accounts: AccountService;
  limiter: RateLimiter;
  onError: (error: unknown) => void;
  /** How client metadata documents are fetched beyond the configuration (a test's trust anchors, resolver). */
  documents?: Partial<DocumentFetchOptions>;
}

/**
 * MCP authorization, built once: the bearer check (for the request guard, before routes exist) and the
 * routes (registered with the others).
 */
export function createOAuth(options: OAuthOptions) {
  const { store, config, accounts, limiter } = options;
  const publicUrl = config.PROMPTSTORE_PUBLIC_URL;
  const grants = new OAuthGrantStore(store.db);
  const clients = new ClientRegistry(new OAuthClientStore(store.db), {
    fetch: { allowPrivate: config.PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE, ...options.documents },
  });
  const authorization = new AuthorizationService(clients, new OAuthRequestStore(store.db), grants, accounts, {
    accessTokenTtlMs: config.PROMPTSTORE_OAUTH_ACCESS_TOKEN_SECONDS * 1000,
  });
  const bearer = mcpBearer(new TokenAccess(grants, options.onError), publicUrl);
  return {
    bearer,
    register(app: FastifyInstance): void {
      registerOAuthMetadataRoutes(app, publicUrl);
      registerOAuthRoutes(app, { authorization, clients, limiter, publicUrl });
      registerConsentRoutes(app, authorization, new ConnectedApps(grants, accounts), publicUrl);
    },
  };
}

/**
 * Form bodies, for the OAuth endpoints that take them (RFC 6749: token and revocation); handed over as
 * text. Every other route keeps refusing them as before, with the same 415.
 */
export function parseOAuthForms(app: FastifyInstance): void {
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (request, body, done) => {
    const url = request.routeOptions.url;
    if (url === "/oauth/token" || url === "/oauth/revoke") return done(null, body);
    done(new AppError("unsupported_media_type", "content-type: must be application/json"), undefined);
  });
}
