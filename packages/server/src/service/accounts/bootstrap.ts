import type { PlanName } from "@promptstore/core/accounts/plans";
import type { ApiKeyInfo, Organization, Project } from "../../store/accounts/tenants.js";
import type { AccountService } from "./account-service.js";
import type { TenantService } from "./tenant-service.js";

export interface Bootstrap {
  organization: Organization;
  project: Project;
  key: ApiKeyInfo & { key: string };
  /** The dashboard's first account, owner of the organization; the password is a one-time password. */
  owner: { email: string; password: string };
}

export const DEFAULT_ORGANIZATION = "default";

/**
 * On an empty database: a default organization, project and key, so a first start is usable at once.
 * Two instances starting together on one empty database: the unique organization name lets one win.
 */
export async function bootstrapIfEmpty(
  tenants: TenantService,
  accounts: AccountService,
  options: { plan: PlanName; ownerEmail: string },
): Promise<Bootstrap | null> {
  if (!(await tenants.isEmpty())) return null;
  let organization: Organization;
  try {
    organization = await tenants.createOrganization(DEFAULT_ORGANIZATION, options.plan);
  } catch (error) {
    if (await tenants.findOrganization(DEFAULT_ORGANIZATION)) return null;
    throw error;
  }
  const project = await tenants.createProject(organization.id, "Default project");
  const key = await tenants.createApiKey(project.id);
  const owner = await accounts.createUser(options.ownerEmail);
  if (!owner) throw new Error(`bootstrap: an account ${options.ownerEmail} already exists`);
  await accounts.store.addMembership(organization.id, owner.user.id, "owner");
  return { organization, project, key, owner: { email: owner.user.email, password: owner.password } };
}
