import type { EventStore } from "../../store/events.js";

const EVERY_MS = 10 * 60_000;

/**
 * Deletes events older than the retention, now and every ten minutes, until the returned function is
 * called. Every instance may do it: deleting what another already deleted is harmless.
 */
export function pruneEvents(events: EventStore, retentionHours: number, onError: (error: unknown) => void): () => void {
  const prune = () => {
    const before = new Date(Date.now() - retentionHours * 3_600_000).toISOString();
    events.prune(before).catch(onError);
  };
  prune();
  const timer = setInterval(prune, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
