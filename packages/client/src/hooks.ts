import type { PromptstoreOptions } from "./options.js";

/** How the client calls the application's hooks, so that nothing they throw reaches the client's own work. */
export class Hooks {
  constructor(
    private readonly options: PromptstoreOptions,
    private readonly closed: AbortSignal,
  ) {}

  /** Calls an application hook: what it throws goes to onError, and what onError throws nowhere. */
  call(hook: () => void): void {
    try {
      hook();
    } catch (error) {
      try {
        this.options.onError?.(error);
      } catch {
        // A failing onError has nowhere left to go.
      }
    }
  }

  /** Tells onError of a failure in the background. */
  error(error: unknown): void {
    this.call(() => this.options.onError?.(error));
  }

  /** Work nobody waits for: its failure goes to onError unless the client was closed meanwhile. */
  background(promise: Promise<unknown>): void {
    promise.catch((error: unknown) => {
      if (!this.closed.aborted) this.error(error);
    });
  }
}
