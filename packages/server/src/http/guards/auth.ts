import { AppError } from "@promptstore/core/errors";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../../service/access.js";
import type { KeyGrant } from "../../store/accounts/tenants.js";

declare module "fastify" {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Routes that need the project API key. */
    auth?: boolean;
    /** The MCP endpoint: its Origin header is checked before anything else. */
    mcp?: boolean;
  }
}

/** Resolves an API key to its grant, or undefined when no active key matches; may answer synchronously. */
export type KeyResolver = (key: string) => KeyGrant | undefined | Promise<KeyGrant | undefined>;

export type AuthFailureHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void> | void;

const MAX_KEY_LENGTH = 200;

export function grantToCaller(grant: KeyGrant): Caller {
  return {
    projectId: grant.projectId,
    projectName: grant.projectName,
    orgId: grant.orgId,
    plan: grant.plan,
    actor: grant.actor,
    access: grant.access,
  };
}

export interface AuthHooks {
  beforeAuth?: AuthFailureHook;
  onInvalidKey?: AuthFailureHook;
}

/**
 * Authenticates a request to a route that asks for it, before its body is read; sets `request.caller`.
 * `onInvalidKey` (missing or wrong key) lets a surface (v1) throttle clients that guess keys.
 */
export async function authenticate(
  request: FastifyRequest,
  reply: FastifyReply,
  resolve: KeyResolver,
  hooks: AuthHooks,
): Promise<void> {
  await hooks.beforeAuth?.(request, reply);
  const header = request.headers["x-api-key"];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === "") {
    await hooks.onInvalidKey?.(request, reply);
    // A key sent as `Authorization: Bearer …` (as many APIs take one) is not read: say where it goes.
    const where = request.headers.authorization
      ? "the key goes in the x-api-key header, not Authorization"
      : "send the project key in the x-api-key header";
    throw new AppError("unauthorized", `x-api-key: missing API key; ${where}`);
  }
  const grant = key.length <= MAX_KEY_LENGTH ? await resolve(key) : undefined;
  if (!grant) {
    await hooks.onInvalidKey?.(request, reply);
    throw new AppError("unauthorized", "x-api-key: invalid API key");
  }
  request.caller = grantToCaller(grant);
}

export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new AppError("unauthorized", "x-api-key: missing API key");
  return request.caller;
}
