import { AppError } from "@promptstore/core/errors";
import { type KeyScope, scopeAllows } from "@promptstore/core/key-scopes";

/**
 * Refuses, with a 403 that names the scope needed, what the caller's key (or dashboard role) does not allow.
 * Every service that acts on a project's behalf calls it, so a refusal is the same on REST, v1, MCP, the
 * events stream and the dashboard, and no route can forget it.
 */
export function requireAccess(held: { access: KeyScope }, needed: KeyScope, action: string): void {
  if (scopeAllows(held.access, needed)) return;
  throw new AppError(
    "forbidden",
    `scope: ${action} needs a key with scope ${needed === "publish" ? "publish" : `${needed} or higher`}; this key has scope ${held.access}`,
  );
}
