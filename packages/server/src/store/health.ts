import { type DatabaseUnavailable, type FaultReason, faultOf } from "./faults.js";

/** What the store tells whoever watches it (the server's log): once per outage, not once per request. */
export interface HealthListener {
  /** The first fault of an outage. */
  down(fault: DatabaseUnavailable): void;
  /** The outage is over (settled), with how long it lasted until the database first answered again. */
  up(downForMs: number): void;
}

/**
 * A restart fails and succeeds by turns for a moment (connections ended, then "shutting down", then back):
 * an outage is over once the database has answered for this long with no fault.
 */
export const SETTLE_MS = 1_000;

/**
 * Whether the database answers, as the store's own queries find it: an outage starts at the first fault and
 * ends at the next success, and is reported over once no fault followed that for SETTLE_MS. Checking costs
 * a comparison per query, so it runs on every one. It also counts, for the metrics, faults by reason and
 * reconnections: of the pool (an outage ended) and of the change channel's LISTEN connection.
 */
export class DatabaseHealth {
  private downSince: number | undefined;
  /** The outage being reported: from its first fault until it has settled. */
  private outageSince: number | undefined;
  private settling: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<HealthListener>();
  readonly faults = new Map<FaultReason, number>();
  readonly reconnections = { pool: 0, listen: 0 };

  get reachable(): boolean {
    return this.downSince === undefined;
  }

  watch(listener: HealthListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ok(): void {
    if (this.downSince === undefined) return;
    this.downSince = undefined;
    const since = this.outageSince as number;
    const back = Date.now();
    this.settling = setTimeout(() => {
      this.settling = undefined;
      this.outageSince = undefined;
      this.reconnections.pool++;
      for (const listener of this.listeners) listener.up(back - since);
    }, SETTLE_MS);
    this.settling.unref();
  }

  /** Returns the error to throw: the fault it is, or the error itself when it is no fault. */
  failed(error: unknown): unknown {
    const fault = faultOf(error);
    if (!fault) return error;
    this.faults.set(fault.reason, (this.faults.get(fault.reason) ?? 0) + 1);
    if (this.downSince !== undefined) return fault;
    this.downSince = Date.now();
    clearTimeout(this.settling);
    this.settling = undefined;
    if (this.outageSince === undefined) {
      this.outageSince = this.downSince;
      for (const listener of this.listeners) listener.down(fault);
    }
    return fault;
  }

  /** Runs a database call, translating its fault and marking the outage's start or end. */
  async guard<T>(work: Promise<T>): Promise<T> {
    try {
      const result = await work;
      this.ok();
      return result;
    } catch (error) {
      throw this.failed(error);
    }
  }
}
