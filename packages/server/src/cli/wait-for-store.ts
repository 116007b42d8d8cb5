import { faultOf, underlyingMessage } from "../store/faults.js";
import { openStore, type Store, type StoreOptions } from "../store/index.js";

const BACKOFF_MS = [250, 500, 1000, 2000];

/**
 * Opens the store, waiting for a database that cannot be reached yet (started beside the server, or
 * restarting) for up to `waitSeconds`, trying again with backoff; `onWait` is told once. A database that
 * answers but refuses (a wrong password, no such database) fails at once: waiting would not mend it.
 * The server does not listen meanwhile, so a load balancer sees it as down, as a 503 would tell it.
 */
export async function openStoreWhenReachable(
  databaseUrl: string | undefined,
  options: StoreOptions,
  waitSeconds: number,
  onWait: (reason: string) => void,
): Promise<Store> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await openStore(databaseUrl, options);
    } catch (error) {
      const fault = faultOf(error);
      const transient = fault && ["connection", "shutting_down", "too_many_connections"].includes(fault.reason);
      if (!fault || !transient) throw error;
      const reason = underlyingMessage(fault);
      if (Date.now() >= deadline) {
        throw new Error(`database unreachable${waitSeconds > 0 ? ` (waited ${waitSeconds} s)` : ""}: ${reason}`);
      }
      if (attempt === 0) onWait(reason);
      const pause = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)] as number;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
    }
  }
}
