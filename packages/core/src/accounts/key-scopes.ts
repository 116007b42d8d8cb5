import { z } from "zod";

/**
 * What an API key may do, each scope including the one before it: `read` (every read, the events stream),
 * `write` (also create and save versions), `publish` (also move production, delete prompts and manage the
 * project's webhooks and audit trail). An application in production should hold a read key: a leaked one
 * cannot change what production serves.
 */
export const KEY_SCOPES = ["read", "write", "publish"] as const;

export type KeyScope = (typeof KEY_SCOPES)[number];

/** Keys made before scopes existed, and keys created without one, keep the full powers docs/api-contract.md gives every key. */
export const DEFAULT_KEY_SCOPE: KeyScope = "publish";

export const keyScopeSchema = z.enum(KEY_SCOPES, { error: `must be one of ${KEY_SCOPES.join(", ")}` });

export const isKeyScope = (value: unknown): value is KeyScope => KEY_SCOPES.includes(value as KeyScope);
