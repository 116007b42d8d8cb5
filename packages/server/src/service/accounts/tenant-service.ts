import { DEFAULT_KEY_SCOPE, type KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { PlanName } from "@promptstore/core/accounts/plans";
import type { Change } from "@promptstore/core/change";
import type { ApiKeyInfo, KeyGrant, Organization, Project, TenantStore } from "../../store/accounts/tenants.js";
import type { ChangeBus } from "../events/change-bus.js";

/**
 * Organizations, plans, projects and keys. Changes that narrow access (revoking a key, changing a plan)
 * are announced, to this process's caches and to every other instance (`announce`, which resolves once
 * they have all dropped what they held), so every key cache drops what it held before the change answers.
 * The CLI runs this too, so a revocation from the command line reaches running servers. Key creation and
 * revocation and plan changes are written to the audit trail in their own transaction, with `actor`
 * (`user:<e-mail>` from the dashboard, `cli` from the command line; `system` when none is given).
 */
export class TenantService {
  constructor(
    readonly store: TenantStore,
    private readonly bus: ChangeBus,
    private readonly announce: (change: Change) => Promise<void> = async () => {},
  ) {}

  private async changed(): Promise<void> {
    this.bus.publish({ kind: "tenants" });
    await this.announce({ kind: "tenants" });
  }

  isEmpty = () => this.store.isEmpty();
  findOrganization = (ref: string) => this.store.findOrganization(ref);
  findProjects = (ref: string) => this.store.findProjects(ref);
  listApiKeys = (projectId: string) => this.store.listApiKeys(projectId);
  projectsWithCounts = (orgId: string) => this.store.projectsWithCounts(orgId);
  findGrant = (key: string): Promise<KeyGrant | undefined> => this.store.findGrant(key);
  touchApiKey = (keyId: string, at: string) => this.store.touchApiKey(keyId, at);

  createOrganization(name: string, plan: PlanName): Promise<Organization> {
    return this.store.createOrganization(name, plan);
  }

  async setPlan(orgId: string, plan: PlanName, actor = "system"): Promise<void> {
    await this.store.setPlan(orgId, plan, actor);
    await this.changed();
  }

  createProject(orgId: string, name: string): Promise<Project> {
    return this.store.createProject(orgId, name);
  }

  createApiKey(
    projectId: string,
    options: { scope?: KeyScope; actor?: string } = {},
  ): Promise<ApiKeyInfo & { key: string }> {
    return this.store.createApiKey(projectId, options.scope ?? DEFAULT_KEY_SCOPE, options.actor ?? "system");
  }

  /** Within `projectId` when given: a key of another project is then not found. */
  async revokeApiKey(
    keyId: string,
    options: { projectId?: string; actor?: string } = {},
  ): Promise<ApiKeyInfo | undefined> {
    const result = await this.store.revokeApiKey(keyId, options.actor ?? "system", options.projectId);
    if (result?.revoked) await this.changed();
    return result?.key;
  }
}
