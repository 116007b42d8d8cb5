import type { Change } from "@promptstore/core/change";
import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/**
 * Carries committed changes to the other processes on the same database, so that every instance's caches
 * drop what a write on any instance made stale, before that write answers.
 */
export interface ChangeChannel {
  /**
   * Announces a change as part of the transaction `db` is in: other instances hear it exactly when that
   * transaction commits, and never when it rolls back (outside a transaction, at once). Undefined when no
   * other instance is listening, so there is nothing to wait for.
   */
  announce(db: Kysely<Database>, change: Change): Promise<Announcement | undefined>;
  /**
   * Delivers changes announced by other processes until the returned function is called. `deliver` must
   * have dropped what the change made stale when it returns: its return is what is acknowledged.
   * `onError` also hears of acknowledgements that did not come in time.
   */
  listen(deliver: (change: Change) => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A change announced in a transaction that has not yet ended. */
export interface Announcement {
  /**
   * Call after commit. Resolves once every other instance that was listening when the change was announced
   * has dropped what it made stale, or is gone; at the deadline at the latest, reported and never thrown:
   * the change is committed and the write must answer.
   */
  delivered(): Promise<void>;
  /** Call after a rollback: nobody will hear the change. */
  withdraw(): void;
}

/** How long a write waits for the other instances unless configured (PROMPTSTORE_INVALIDATION_TIMEOUT_MS). */
export const DEFAULT_INVALIDATION_TIMEOUT_MS = 1_000;
