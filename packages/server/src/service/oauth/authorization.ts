import { createHash, randomBytes } from "node:crypto";
import type { ConsentView } from "@promptstore/core/accounts/connected-apps";
import { isKeyScope, KEY_SCOPES, type KeyScope } from "@promptstore/core/accounts/key-scopes";
import { AppError, notFound } from "@promptstore/core/errors";
import type { User } from "../../store/accounts/accounts.js";
import type { OAuthClient } from "../../store/oauth/clients.js";
import type { NewToken, OAuthGrantStore } from "../../store/oauth/grants.js";
import type { OAuthRequestStore, PendingRequest } from "../../store/oauth/requests.js";
import { highestScopeOf, requireRole } from "../access.js";
import type { AccountService } from "../accounts/account-service.js";
import type { ClientRegistry } from "./client-registry.js";
import { OAuthFailure, ShownFailure } from "./errors.js";
import { redirectUriMatches } from "./redirect-uris.js";

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const secret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`;

/** How long a person has to answer the consent screen. */
export const REQUEST_TTL_MS = 10 * 60 * 1000;
/** An authorization code is exchanged within this, once. */
export const CODE_TTL_MS = 60 * 1000;
export const REFRESH_TTL_MS = 30 * 86_400_000;

const PKCE = /^[A-Za-z0-9\-._~]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Where this server is, as the request at hand sees it (or as configured): issuer and MCP resource. */
export interface Site {
  issuer: string;
  resource: string;
}

export interface AuthorizeParams {
  response_type?: string | undefined;
  client_id?: string | undefined;
  redirect_uri?: string | undefined;
  state?: string | undefined;
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
  scope?: string | undefined;
  resource?: string | undefined;
}

export interface TokenAnswer {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: KeyScope;
}

/** The URL with the parameters added to its query (a redirect URI may carry a query of its own). */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

/** The highest of the key scopes named in an OAuth `scope` string, or null when it names none. */
export function requestedScope(scope: string | null | undefined): KeyScope | null {
  const named = (scope ?? "").split(" ").filter(isKeyScope);
  return named.length === 0 ? null : (KEY_SCOPES[Math.max(...named.map((s) => KEY_SCOPES.indexOf(s)))] ?? null);
}

const redirectHost = (uri: string) => {
  const url = new URL(uri);
  return url.host === ""
    ? `${url.protocol}${url.pathname}`
    : url.protocol === "https:" || url.protocol === "http:"
      ? url.host
      : `${url.protocol}//${url.host}`;
};

/**
 * The authorization server's flow (authorization code with PKCE S256, refresh with rotation), for one
 * resource: this server's MCP endpoint. The person's consent names one project and a scope their role
 * allows; the checks of who may do what are access.ts's, as for keys and roles.
 */
export class AuthorizationService {
  constructor(
    private readonly clients: ClientRegistry,
    private readonly requests: OAuthRequestStore,
    private readonly grants: OAuthGrantStore,
    private readonly accounts: AccountService,
    private readonly options: { accessTokenTtlMs: number },
  ) {}

  /**
   * Checks an authorization request and keeps it for the consent screen; returns its id. Until the client
   * and its redirect URI are known to be good, a refusal is a ShownFailure; after, an OAuthFailure whose
   * redirect (with `state`) the caller builds with `errorRedirect`.
   */
  async authorize(params: AuthorizeParams, site: Site): Promise<{ requestId: string } | { redirect: string }> {
    if (!params.client_id) throw new ShownFailure("client_id: required");
    const client = await this.clients.forAuthorization(params.client_id);
    if (!params.redirect_uri) throw new ShownFailure("redirect_uri: required");
    if (!redirectUriMatches(client.redirectUris, params.redirect_uri)) {
      throw new ShownFailure(
        `redirect_uri: ${params.redirect_uri.slice(0, 200)} is not a redirect URI of ${client.name}; it must be one it registered, exactly`,
      );
    }
    const fail = (error: string, description: string) => ({
      redirect: withParams(params.redirect_uri as string, {
        error,
        error_description: description,
        state: params.state,
        iss: site.issuer,
      }),
    });
    if (params.response_type !== "code") {
      return fail("unsupported_response_type", "response_type: must be code");
    }
    if (!params.state) return fail("invalid_request", "state: required");
    if (params.state.length > 1024) return fail("invalid_request", "state: must be at most 1024 characters");
    if (!params.code_challenge) return fail("invalid_request", "code_challenge: required (PKCE)");
    if (params.code_challenge_method !== "S256") {
      return fail("invalid_request", "code_challenge_method: must be S256");
    }
    if (!CHALLENGE.test(params.code_challenge)) {
      return fail("invalid_request", "code_challenge: must be the base64url SHA-256 of the code verifier");
    }
    if (params.resource !== undefined && !sameResource(params.resource, site.resource)) {
      return fail("invalid_target", `resource: this server issues tokens only for ${site.resource}`);
    }
    if (params.scope !== undefined && params.scope.length > 200) {
      return fail("invalid_scope", "scope: must be at most 200 characters");
    }
    const requestId = randomBytes(24).toString("base64url");
    await this.requests.create({
      id: requestId,
      client_id: client.id,
      redirect_uri: params.redirect_uri,
      state: params.state,
      code_challenge: params.code_challenge,
      scope: params.scope ?? null,
      resource: site.resource,
      expires_at: new Date(Date.now() + REQUEST_TTL_MS).toISOString(),
    });
    return { requestId };
  }

  private async pending(requestId: string): Promise<{ request: PendingRequest; client: OAuthClient }> {
    const request = requestId.length <= 64 ? await this.requests.pending(requestId) : undefined;
    const client = request && (await this.clients.known(request.client_id));
    if (!request || !client) {
      throw notFound("request: this sign-in request is unknown, already answered or expired; start again from the app");
    }
    return { request, client };
  }

  /** What the consent screen shows the signed-in person. */
  async consent(user: User, requestId: string): Promise<ConsentView> {
    const { request, client } = await this.pending(requestId);
    const memberships = await this.accounts.memberships(user);
    return {
      request_id: request.id,
      client: {
        id: client.id,
        name: client.name,
        kind: client.kind,
        redirect_uri: request.redirect_uri,
        redirect_host: redirectHost(request.redirect_uri),
      },
      requested_scope: requestedScope(request.scope),
      organizations: memberships.map((m) => ({
        id: m.org.id,
        name: m.org.name,
        role: m.role,
        highest_scope: highestScopeOf(m.role),
        projects: m.projects.map((p) => ({ id: p.id, name: p.name })),
      })),
    };
  }

  /**
   * The person's answer; returns where the browser goes next (the client's redirect URI with a code, or
   * with access_denied). Allow names one project of theirs and a scope their role holds.
   */
  async decide(
    user: User,
    requestId: string,
    answer: { allow: false } | { allow: true; projectId: string; scope: KeyScope },
    site: Site,
  ): Promise<string> {
    const { request } = await this.pending(requestId);
    if (!answer.allow) {
      if (!(await this.requests.decide(request.id, null))) await this.pending("");
      return withParams(request.redirect_uri, {
        error: "access_denied",
        error_description: "the person denied the request",
        state: request.state,
        iss: site.issuer,
      });
    }
    // Not a member of the project's organization: not found, as everywhere; a role below the scope: 403.
    const project = await this.accounts.projectCaller(user, answer.projectId, "read");
    requireRole(project.role, answer.scope);
    const code = secret("psac_");
    const decided = await this.requests.decide(request.id, {
      codeHash: sha256(code),
      codeExpiresAt: new Date(Date.now() + CODE_TTL_MS).toISOString(),
      userId: user.id,
      projectId: project.projectId,
      scope: answer.scope,
    });
    if (!decided) await this.pending("");
    return withParams(request.redirect_uri, { code, state: request.state, iss: site.issuer });
  }

  /** The authorization_code grant. */
  async exchangeCode(
    params: { code?: string; code_verifier?: string; client_id?: string; redirect_uri?: string; resource?: string },
    site: Site,
  ): Promise<TokenAnswer> {
    if (!params.code) throw new OAuthFailure("invalid_request", "code: required");
    if (!params.client_id) throw new OAuthFailure("invalid_request", "client_id: required (public clients send it)");
    if (!params.code_verifier) throw new OAuthFailure("invalid_request", "code_verifier: required (PKCE)");
    if (!params.redirect_uri) throw new OAuthFailure("invalid_request", "redirect_uri: required");
    // Taken (marked used) before anything else is checked: a wrong verifier spends the code too.
    const taken = params.code.length <= 100 ? await this.requests.takeCode(sha256(params.code)) : undefined;
    if (!taken) throw new OAuthFailure("invalid_grant", "code: unknown or expired");
    const { row, first } = taken;
    if (!first) {
      // A code used twice was probably stolen: what it gave is revoked (RFC 6749 4.1.2).
      if (row.grant_id) await this.grants.revoke(row.grant_id, { reason: "authorization code reused" });
      throw new OAuthFailure("invalid_grant", "code: already used; the tokens it gave are revoked");
    }
    if (row.code_expires_at === null || row.code_expires_at <= new Date().toISOString()) {
      throw new OAuthFailure("invalid_grant", "code: expired; a code must be exchanged within 60 s");
    }
    if (row.client_id !== params.client_id) {
      throw new OAuthFailure("invalid_grant", "code: was issued to another client");
    }
    if (row.redirect_uri !== params.redirect_uri) {
      throw new OAuthFailure("invalid_grant", "redirect_uri: does not match the authorization request's");
    }
    if (
      !PKCE.test(params.code_verifier) ||
      createHash("sha256").update(params.code_verifier).digest("base64url") !== row.code_challenge
    ) {
      throw new OAuthFailure("invalid_grant", "code_verifier: does not match the code challenge");
    }
    if (params.resource !== undefined && !sameResource(params.resource, row.resource)) {
      throw new OAuthFailure("invalid_target", `resource: the code was issued for ${row.resource}`);
    }
    if (!sameResource(row.resource, site.resource)) {
      throw new OAuthFailure("invalid_target", `resource: the code was issued for ${row.resource}`);
    }
    const client = await this.clients.known(row.client_id);
    const user = row.user_id ? await this.accounts.store.findUser(row.user_id) : undefined;
    if (!client || !user || !row.project_id || !row.granted_scope) {
      throw new OAuthFailure("invalid_grant", "code: unknown or expired");
    }
    await this.stillAllowed(user.id, row.project_id, row.granted_scope);
    const project = await this.accounts.store.projectGrant(user.id, row.project_id);
    const grantId = `oag_${randomBytes(12).toString("hex")}`;
    const { answer, tokens } = this.issue(row.granted_scope);
    await this.grants.create(
      {
        id: grantId,
        user_id: user.id,
        org_id: project?.orgId ?? "",
        project_id: row.project_id,
        scope: row.granted_scope,
        client_id: client.id,
        client_name: client.name,
        resource: row.resource,
        created_at: new Date().toISOString(),
      },
      tokens,
    );
    await this.requests.linkGrant(row.id, grantId);
    return answer;
  }

  /** The refresh_token grant: the token is exchanged once, for a new pair (rotation). */
  async refresh(
    params: { refresh_token?: string; client_id?: string; scope?: string; resource?: string },
    site: Site,
  ): Promise<TokenAnswer> {
    if (!params.refresh_token) throw new OAuthFailure("invalid_request", "refresh_token: required");
    if (!params.client_id) throw new OAuthFailure("invalid_request", "client_id: required (public clients send it)");
    const hash = params.refresh_token.length <= 100 ? sha256(params.refresh_token) : "";
    const owner = await this.grants.grantOfToken(hash);
    if (!owner) throw new OAuthFailure("invalid_grant", "refresh_token: unknown, expired or revoked");
    if (owner.clientId !== params.client_id) {
      throw new OAuthFailure("invalid_grant", "refresh_token: was issued to another client");
    }
    const grant = await this.grants.find(owner.grantId);
    if (!grant || grant.revoked_at !== null) {
      throw new OAuthFailure("invalid_grant", "refresh_token: unknown, expired or revoked");
    }
    if (params.resource !== undefined && !sameResource(params.resource, grant.resource)) {
      throw new OAuthFailure("invalid_target", `resource: the grant is for ${grant.resource}`);
    }
    if (!sameResource(grant.resource, site.resource)) {
      throw new OAuthFailure("invalid_target", `resource: the grant is for ${grant.resource}`);
    }
    const asked = requestedScope(params.scope);
    if (asked !== null && KEY_SCOPES.indexOf(asked) > KEY_SCOPES.indexOf(grant.scope)) {
      throw new OAuthFailure("invalid_scope", `scope: the grant holds ${grant.scope}; ask the person again for more`);
    }
    await this.stillAllowed(grant.user_id, grant.project_id, grant.scope);
    const { answer, tokens } = this.issue(grant.scope);
    const rotated = await this.grants.rotate(hash, tokens);
    if (!rotated) throw new OAuthFailure("invalid_grant", "refresh_token: unknown, expired or revoked");
    if ("reused" in rotated) {
      throw new OAuthFailure(
        "invalid_grant",
        "refresh_token: already used (rotated); the grant is revoked, sign in again",
      );
    }
    return answer;
  }

  /** RFC 7009: revokes the grant of any of its tokens; unknown tokens are no error. */
  async revokeToken(token: string | undefined, clientId: string | undefined): Promise<void> {
    if (!token) throw new OAuthFailure("invalid_request", "token: required");
    if (token.length > 100) return;
    const owner = await this.grants.grantOfToken(sha256(token));
    if (!owner) return;
    if (clientId !== undefined && clientId !== owner.clientId) return;
    await this.grants.revoke(owner.grantId, { reason: "the client" });
  }

  /** The person is still a member with a role that holds the scope; else the grant is no use. */
  private async stillAllowed(userId: string, projectId: string, scope: KeyScope): Promise<void> {
    const project = await this.accounts.store.projectGrant(userId, projectId);
    try {
      if (!project) throw new AppError("forbidden", "not a member");
      requireRole(project.role, scope);
    } catch {
      throw new OAuthFailure("invalid_grant", "the person no longer holds this project and scope; sign in again");
    }
  }

  private issue(scope: KeyScope): { answer: TokenAnswer; tokens: NewToken[] } {
    const access = secret("psat_");
    const refresh = secret("psrt_");
    const ttl = this.options.accessTokenTtlMs;
    return {
      answer: {
        access_token: access,
        token_type: "Bearer",
        expires_in: Math.floor(ttl / 1000),
        refresh_token: refresh,
        scope,
      },
      tokens: [
        { hash: sha256(access), kind: "access", expiresAt: new Date(Date.now() + ttl).toISOString() },
        { hash: sha256(refresh), kind: "refresh", expiresAt: new Date(Date.now() + REFRESH_TTL_MS).toISOString() },
      ],
    };
  }
}

/** RFC 8707 resources compared as the MCP SDK does: without a fragment and one trailing slash. */
export function sameResource(a: string, b: string): boolean {
  const norm = (s: string) => s.replace(/#.*$/, "").replace(/\/$/, "");
  return norm(a) === norm(b);
}
