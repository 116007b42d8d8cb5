import type { Change } from "@promptstore/core/change";

export type ChangeListener = (change: Change) => void;

/**
 * Tells subscribers (caches, a cross-instance relay) about committed changes. A subscriber that throws
 * never fails the write that caused the change.
 */
export class ChangeBus {
  private readonly listeners = new Set<ChangeListener>();

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(change: Change): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A cache that cannot be told must not turn a committed write into an error.
      }
    }
  }
}
