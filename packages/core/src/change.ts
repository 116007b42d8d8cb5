/**
 * What changed, as caches need to know it. Small and serializable: it crosses processes.
 * `reset` means "changes may have been missed" (a lost connection): drop everything.
 */
export type Change = { kind: "prompt"; projectId: string; promptId: string } | { kind: "tenants" } | { kind: "reset" };
