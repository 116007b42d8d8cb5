/**
 * What `get()` serves when the service cannot: the caller's fallback, and which failures call for it; and a
 * wait for a shared read that one caller may abandon.
 */
import { PromptstoreError, PromptstoreNetworkError, PromptstoreTimeoutError } from "./errors.js";
import { deepFreeze } from "./memory.js";
import type { Fallback, Prompt } from "./types.js";
import { variablesOf } from "./variables.js";

const EPOCH = "1970-01-01T00:00:00.000Z";

/** Failures where the service could not serve at all: the fallback's cases. */
export function unreachable(error: unknown): boolean {
  return (
    error instanceof PromptstoreNetworkError ||
    error instanceof PromptstoreTimeoutError ||
    (error instanceof PromptstoreError && (error.status >= 500 || error.status === 429))
  );
}

export function fallbackPrompt(promptId: string, fallback: Fallback): Prompt {
  const given = typeof fallback === "string" ? { prompt: fallback } : fallback;
  const text = given.prompt;
  return deepFreeze({
    id: promptId,
    name: promptId,
    description: "",
    sections: [{ id: "fallback", title: "Fallback", content: text, enabled: true }],
    variables: variablesOf(text),
    version: "fallback",
    production_version: null,
    created_at: EPOCH,
    updated_at: EPOCH,
    labels: {},
    ...given,
    label: "fallback",
    prompt: text,
    fallback: true,
  });
}

/** Rejects when `signal` aborts, without cancelling `promise` (shared with other callers). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
