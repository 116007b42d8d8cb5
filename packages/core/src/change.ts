/**
 * What changed, as caches need to know it. Small and serializable: it crosses processes.
 * - `events`: an event about the project, not one prompt, was recorded (a label's requirement changed):
 *   event streams and webhooks read it; no cache holds anything it made stale.
 * - `reset`: changes may have been missed: drop everything.
 * - `deaf`: from now until the next `reset`, changes made by other processes are not heard (the change
 *   channel's connection is lost). Nothing cached may be served while the database can answer instead;
 *   what was cached may still be served when it cannot (no other process can write then either).
 */
export type Change =
  | { kind: "prompt"; projectId: string; promptId: string }
  | { kind: "events"; projectId: string }
  | { kind: "tenants" }
  | { kind: "reset" }
  | { kind: "deaf" };
