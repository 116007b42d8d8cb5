import type { GrantView } from "@promptstore/core/accounts/connected-apps";
import { notFound } from "@promptstore/core/errors";
import type { User } from "../../store/accounts/accounts.js";
import type { OAuthGrantStore } from "../../store/oauth/grants.js";
import type { AccountService } from "../accounts/account-service.js";

/**
 * Settings → Connected apps: each person sees and revokes the MCP clients they allowed; an organization's
 * owners see and revoke every grant in it (a grant elsewhere is not found, as anything outside one's
 * organizations is).
 */
export class ConnectedApps {
  constructor(
    private readonly grants: OAuthGrantStore,
    private readonly accounts: AccountService,
  ) {}

  mine(user: User): Promise<GrantView[]> {
    return this.grants.list({ userId: user.id });
  }

  async ofOrganization(user: User, orgId: string): Promise<GrantView[]> {
    const org = await this.accounts.orgAccess(user, orgId, "admin");
    return this.grants.list({ orgId: org.id });
  }

  async revoke(user: User, grantId: string): Promise<void> {
    const grant = grantId.length <= 64 ? await this.grants.find(grantId) : undefined;
    const missing = notFound(`connected app ${grantId.slice(0, 64)} not found`);
    if (!grant || grant.revoked_at !== null) throw missing;
    if (grant.user_id !== user.id) {
      // Another person's grant: only an owner of its organization may end it.
      await this.accounts.orgAccess(user, grant.org_id, "admin").catch(() => {
        throw missing;
      });
    }
    await this.grants.revoke(grant.id, { actor: `user:${user.email}` });
  }
}
