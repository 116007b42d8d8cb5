/**
 * What changed, as caches need to know it. Small and serializable: it crosses processes.
 * - `reset`: changes may have been missed: drop everything.
 * - `deaf`: from now until the next `reset`, changes made by other processes are not heard (the change
 *   channel's connection is lost). Nothing cached may be served while the database can answer instead;
 *   what was cached may still be served when it cannot (no other process can write then either).
 */
export type Change =
  | { kind: "prompt"; projectId: string; promptId: string }
  | { kind: "tenants" }
  | { kind: "reset" }
  | { kind: "deaf" };
