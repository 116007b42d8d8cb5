import type { Role } from "../dashboard.js";
import { KEY_SCOPES, type KeyScope } from "./key-scopes.js";

/**
 * What an action needs: one vocabulary for API keys and dashboard roles. The first three are named after the
 * key scopes that hold them (a key holds its scope's permission and every one before it); `admin` (an
 * organization's members, keys, plan and audit trail) no key holds, only an owner.
 */
export type Permission = KeyScope | "admin" | "approve";

/** What each role holds; the server enforces it, the dashboard only hides what would be refused. */
export const ROLE_PERMISSIONS = {
  read: ["owner", "editor", "viewer"],
  write: ["owner", "editor"],
  publish: ["owner", "editor"],
  admin: ["owner"],
  // Approving or rejecting a release (docs/releases.md): people only, never a key.
  approve: ["owner"],
} as const satisfies Record<Permission, readonly Role[]>;

export function can(role: Role, permission: Permission): boolean {
  return (ROLE_PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/** Whether a key with scope `held` holds `needed`. */
export function keyAllows(held: KeyScope, needed: Permission): boolean {
  return needed !== "admin" && needed !== "approve" && KEY_SCOPES.indexOf(held) >= KEY_SCOPES.indexOf(needed);
}
