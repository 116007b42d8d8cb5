/**
 * A GET whose answer is read as it arrives (a dataset's JSONL export, an evaluation's progress stream): the
 * headers must come within the client's `timeoutMs`, and then every chunk within `idleMs` of the last, so a
 * long answer is never cut while it flows and a dead connection never hangs the reader.
 */
import { PromptstoreError, PromptstoreNetworkError, PromptstoreTimeoutError } from "../errors.js";
import { answerError, buildUrl, type HttpSettings, headersFor, type RequestOptions } from "../http.js";

export interface Streamed {
  res: Response;
  /** The answer's text, chunk by chunk; rejects with a timeout when nothing came within `idleMs`. */
  chunks: AsyncGenerator<string, void, undefined>;
  /** Ends the request (the reader's `finally` does it too). */
  close(): void;
}

/** Aborts `controller` when `signal` does; returns the way to stop listening. */
export function follow(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => {};
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/**
 * Opens the request; a failed answer is the typed error it stands for (its status, message, request id and
 * `Retry-After`), no answer a {@link PromptstoreNetworkError} or {@link PromptstoreTimeoutError}, and an
 * abort of `signals` rejects with its reason.
 */
export async function openStreamed(
  settings: HttpSettings,
  path: string,
  options: { query?: RequestOptions["query"]; accept: string; idleMs: number; signals: (AbortSignal | undefined)[] },
): Promise<Streamed> {
  const label = `GET ${path}`;
  const controller = new AbortController();
  const unfollow = options.signals.map((signal) => follow(signal, controller));
  const close = () => {
    controller.abort();
    for (const stop of unfollow) stop();
  };
  const aborted = () => options.signals.find((s) => s?.aborted);
  let timedOut = false;
  const connectTimer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, settings.timeoutMs);
  let res: Response;
  try {
    res = await settings.fetch(buildUrl(settings.baseUrl, path, options.query), {
      method: "GET",
      headers: headersFor(settings, { accept: options.accept }),
      signal: controller.signal,
    });
  } catch (error) {
    close();
    const by = aborted();
    if (by) throw by.reason ?? error;
    if (timedOut) throw new PromptstoreTimeoutError(settings.timeoutMs, label);
    throw new PromptstoreNetworkError(`${label}: ${(error as Error)?.message ?? error}`, {
      request: label,
      cause: error,
    });
  } finally {
    clearTimeout(connectTimer);
  }
  if (!res.ok || res.body === null) {
    const text = await res.text().catch(() => "");
    close();
    throw answerError(res, text, label);
  }
  const body = res.body;
  async function* chunks(): AsyncGenerator<string, void, undefined> {
    const decoder = new TextDecoder("utf-8");
    const reader = body.getReader();
    let idle = false;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      if (watchdog !== undefined) clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        idle = true;
        controller.abort();
      }, options.idleMs);
    };
    try {
      arm();
      for (;;) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (error) {
          const by = aborted();
          if (by) throw by.reason ?? error;
          if (idle) throw new PromptstoreTimeoutError(options.idleMs, label);
          throw new PromptstoreNetworkError(`${label}: the answer broke off: ${(error as Error)?.message ?? error}`, {
            request: label,
            cause: error,
          });
        }
        if (step.done) break;
        arm();
        const text = decoder.decode(step.value, { stream: true });
        if (text !== "") yield text;
      }
      const rest = decoder.decode();
      if (rest !== "") yield rest;
    } finally {
      if (watchdog !== undefined) clearTimeout(watchdog);
      reader.releaseLock();
      close();
    }
  }
  return { res, chunks: chunks(), close };
}

/** Splits text chunks into lines (LF or CRLF); a last line without its end is a line too. */
export async function* lines(chunks: AsyncIterable<string>): AsyncGenerator<string, void, undefined> {
  let buffer = "";
  for await (const chunk of chunks) {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      yield line.endsWith("\r") ? line.slice(0, -1) : line;
      newline = buffer.indexOf("\n");
    }
  }
  if (buffer !== "") yield buffer;
}

/** Whether an error is worth waiting out and trying again (no answer, a 5xx, a 429), not the caller's fault. */
export function transient(error: unknown): boolean {
  if (!(error instanceof PromptstoreError) || error.code === "closed") return false;
  return error.status === 0 || error.status === 429 || error.status >= 500;
}
