import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { can, keyAllows, type Permission } from "@promptstore/core/accounts/permissions";
import { viaMcpClient } from "@promptstore/core/audit";
import type { Role } from "@promptstore/core/dashboard";
import { AppError } from "@promptstore/core/errors";

/**
 * Who is asking: the project of the API key (or of the dashboard user's membership), the organization whose
 * plan applies, who acts, and what they may do. Every service takes it and decides permissions itself.
 */
export interface Caller {
  projectId: string;
  projectName: string;
  orgId: string;
  plan: string;
  /** Who acts, recorded with each version saved: `key:<prefix>` or `user:<e-mail>`. */
  actor: string;
  /** What the caller may do: the key's scope, or what a dashboard role amounts to. */
  access: KeyScope;
  /** A dashboard user's role in the project's organization: what it holds decides, and refusals name it. */
  role?: Role | undefined;
  /**
   * The MCP client a person's OAuth token was given to (its registered name): the caller then acts as that
   * person (`actor` is theirs) within the token's project and scope, like a key: never as a role, so a token
   * never approves a release nor changes an organization.
   */
  client?: string | undefined;
}

/** Who the audit trail names: the person, and the MCP client they acted through when it was one. */
export function auditActor(caller: Pick<Caller, "actor" | "client">): string {
  return caller.client === undefined ? caller.actor : viaMcpClient(caller.actor, caller.client);
}

/** The highest key scope a role may hold or hand to an MCP client: a viewer reads, editors and owners publish. */
export function highestScopeOf(role: Role): KeyScope {
  return can(role, "publish") ? "publish" : can(role, "write") ? "write" : "read";
}

/**
 * Refuses, with a 403 that names what is needed, what the caller's key (or dashboard role) does not allow.
 * Every service that acts on a project's behalf calls it, so a refusal is the same on REST, v1, MCP, the
 * events stream and the dashboard, and no route can forget it.
 */
export function requireAccess(
  caller: Pick<Caller, "access" | "role">,
  needed: Exclude<Permission, "admin" | "approve">,
  action: string,
): void {
  if (caller.role !== undefined) {
    requireRole(caller.role, needed);
    return;
  }
  if (keyAllows(caller.access, needed)) return;
  throw new AppError(
    "forbidden",
    `scope: ${action} needs a key with scope ${needed === "publish" ? "publish" : `${needed} or higher`}; this key has scope ${caller.access}`,
  );
}

/** Refuses what a dashboard role does not hold, naming the roles that do. */
export function requireRole(role: Role, needed: Permission): void {
  if (can(role, needed)) return;
  throw new AppError(
    "forbidden",
    `role: ${role} may not do this; it needs ${needed === "admin" || needed === "approve" ? "owner" : "editor or owner"}`,
  );
}

/**
 * Refuses what only a person holding the permission may do (an organization's settings, approving a
 * release): a key never holds it, whatever its scope, so a leaked key cannot do it.
 */
export function requirePerson(
  caller: Pick<Caller, "role" | "client">,
  needed: "admin" | "approve",
  action: string,
): void {
  if (caller.role === undefined) {
    const means = caller.client === undefined ? "an API key" : `an MCP client's token (${caller.client})`;
    throw new AppError("forbidden", `scope: ${action} is done by a person in the dashboard, never with ${means}`);
  }
  requireRole(caller.role, needed);
}
