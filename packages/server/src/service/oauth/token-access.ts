import { KEY_SCOPES } from "@promptstore/core/accounts/key-scopes";
import type { OAuthGrantStore } from "../../store/oauth/grants.js";
import { type Caller, highestScopeOf } from "../access.js";
import { sameResource, sha256 } from "./authorization.js";

/** Why a bearer token is refused: the 401's message and its `WWW-Authenticate` error. */
export class TokenRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenRefused";
  }
}

const TOUCH_EVERY_MS = 60_000;

/**
 * Resolves an MCP client's access token to the caller it acts as: the person who granted it, within the
 * grant's project and scope. Read from the database on every request, joined to the person's membership as it
 * is now, so a revocation (on any instance), a removal or a lowered role takes effect at the next request;
 * nothing is cached.
 */
export class TokenAccess {
  /** When each grant's last use was last written, per grant id (this instance). */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly grants: OAuthGrantStore,
    private readonly onError: (error: unknown) => void,
  ) {}

  async callerOf(token: string, resource: string): Promise<Caller> {
    const grant = token.length <= 100 ? await this.grants.access(sha256(token)) : undefined;
    if (!grant) {
      throw new TokenRefused(
        "authorization: the token is unknown or revoked, or its person left the organization; sign in again",
      );
    }
    if (grant.expiresAt <= new Date().toISOString()) {
      throw new TokenRefused("authorization: the token has expired; refresh it or sign in again");
    }
    if (!sameResource(grant.resource, resource)) {
      throw new TokenRefused(`authorization: the token was issued for ${grant.resource}, not for ${resource}`);
    }
    if (KEY_SCOPES.indexOf(grant.scope) > KEY_SCOPES.indexOf(highestScopeOf(grant.role))) {
      throw new TokenRefused(
        `authorization: the person's role (${grant.role}) no longer allows scope ${grant.scope}; sign in again`,
      );
    }
    this.touch(grant.grantId);
    return {
      projectId: grant.projectId,
      projectName: grant.projectName,
      orgId: grant.orgId,
      plan: grant.plan,
      actor: `user:${grant.email}`,
      access: grant.scope,
      client: grant.clientName,
    };
  }

  /** Records a grant's use at most once a minute per instance; never awaited by the request. */
  private touch(grantId: string): void {
    const now = Date.now();
    const last = this.touched.get(grantId);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(grantId, now);
    this.grants.touch(grantId, new Date(now).toISOString()).catch(this.onError);
  }
}
