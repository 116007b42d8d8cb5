import { PromptstoreError } from "../errors.js";
import { backoff, type HttpSettings, request, sleep } from "../http.js";
import type { CallOptions } from "../options.js";
import { SseParser } from "../sse.js";
import type {
  Evaluation,
  EvaluationCase,
  EvaluationCasesPage,
  EvaluationCasesQuery,
  EvaluationList,
  EvaluationProgress,
  EvaluationWithCases,
  StartEvaluationInput,
} from "../types.js";
import { follow, openStreamed, transient } from "./streamed.js";

export interface WaitOptions extends CallOptions {
  /** Told of every `progress` event: `{ status, progress: { done, total } }`. */
  onProgress?: (progress: EvaluationProgress) => void;
  /** After the stream ends or breaks without the end, the first wait before following it again. Default 1 000 ms. */
  intervalMs?: number;
  /** Gives up (a {@link PromptstoreError} with code `timeout`) after this long. Default: no limit. */
  timeoutMs?: number;
}

const path = (id: string, rest = "") => `/api/v2/evaluations/${encodeURIComponent(id)}${rest}`;
/** The server sends a progress event at least every 15 s: three missed and the stream is taken as dead. */
const IDLE_MS = 45_000;

/**
 * Evaluations (docs/evaluations.md): `client.evaluations`. Starting one needs a key with scope `write` (it
 * spends model calls); reading needs `read`.
 *
 * @example
 * ```ts
 * const started = await client.evaluations.run("support-bot", {
 *   versions: ["production", "latest"],
 *   dataset: "ds_0123456789abcdef01234567",
 *   checks: [{ type: "expected", trim: true }, { type: "contains", value: "refund" }],
 *   connection: "con_0123456789abcdef01234567",
 * });
 * const done = await client.evaluations.wait(started.id, { onProgress: (p) => console.log(p.progress) });
 * console.log(done.versions.map((v) => `${v.ref}: ${v.pass_rate}`), done.compare);
 * for await (const c of client.evaluations.casesAll(done.id, { only: "regression" })) console.log(c.case.vars);
 * ```
 */
export class Evaluations {
  constructor(
    private readonly http: HttpSettings,
    private readonly closed: AbortSignal,
  ) {}

  /**
   * Starts an evaluation of one to four versions of a prompt over a dataset (`POST
   * /api/v2/prompts/{id}/evaluations`). Answers at once: `status: "running"` (follow it with
   * {@link Evaluations.wait}), or, when every case was already judged for this content, the whole evaluation,
   * `status: "done"` and `reused: true`, with nothing sent to the provider. Everything that can be refused is
   * refused before anything is sent, the message naming the field (`versions[1]: …`).
   */
  run(promptId: string, input: StartEvaluationInput, options: CallOptions = {}): Promise<Evaluation> {
    return this.call("POST", `/api/v2/prompts/${encodeURIComponent(promptId)}/evaluations`, {
      body: input,
      idempotent: false,
      signal: options.signal,
    });
  }

  /** A prompt's evaluations, newest first (`GET /api/v2/prompts/{id}/evaluations`). */
  list(promptId: string, query: { limit?: number } = {}, options: CallOptions = {}): Promise<EvaluationList> {
    return this.call("GET", `/api/v2/prompts/${encodeURIComponent(promptId)}/evaluations`, {
      query,
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * An evaluation and a page of its cases (`GET /api/v2/evaluations/{id}`): `only` keeps one class
   * (`regression`, `improvement`, `changed`, `errored`, `failed`, `passed`, `pending`), `after` and `limit`
   * (1–200, default 50) page.
   */
  get(id: string, query: EvaluationCasesQuery = {}, options: CallOptions = {}): Promise<EvaluationWithCases> {
    return this.call("GET", path(id), { query, idempotent: true, signal: options.signal });
  }

  /** A page of an evaluation's cases (`GET /api/v2/evaluations/{id}/cases`); `next` is the next page's `after`. */
  cases(id: string, query: EvaluationCasesQuery = {}, options: CallOptions = {}): Promise<EvaluationCasesPage> {
    return this.call("GET", path(id, "/cases"), { query, idempotent: true, signal: options.signal });
  }

  /**
   * Every case of an evaluation (of one class with `only`), page by page (`limit` a request, 200 by default).
   *
   * @example
   * ```ts
   * for await (const c of client.evaluations.casesAll(id, { only: "regression" })) {
   *   console.log(c.position, c.results.map((r) => `${r.state}: ${r.answer?.content}`));
   * }
   * ```
   */
  async *casesAll(
    id: string,
    query: Omit<EvaluationCasesQuery, "after"> = {},
    options: CallOptions = {},
  ): AsyncGenerator<EvaluationCase, void, undefined> {
    let after: number | undefined;
    do {
      const page = await this.cases(id, { limit: 200, ...query, after }, options);
      yield* page.items;
      after = page.next ?? undefined;
    } while (after !== undefined);
  }

  /**
   * Stops an evaluation wherever it runs (`POST /api/v2/evaluations/{id}/stop`): what was judged stays kept,
   * the rest is `pending`, the status `stopped` (`done` if every case had been judged). Stopping an ended one
   * changes nothing.
   */
  stop(id: string, options: CallOptions = {}): Promise<Evaluation> {
    return this.call("POST", path(id, "/stop"), { idempotent: false, signal: options.signal });
  }

  /**
   * Resolves with the evaluation once it has ended (`done`, `failed` or `stopped`), following its progress
   * stream (`GET /api/v2/evaluations/{id}/events`, one request however long it runs). A stream that breaks is
   * followed again (after `intervalMs`, then longer), as long as the service answers; an answer that refuses
   * (401, 404) rejects with that error, as do `signal`, `timeoutMs` and `close()`.
   */
  async wait(id: string, options: WaitOptions = {}): Promise<Evaluation> {
    const deadline = options.timeoutMs === undefined ? undefined : new AbortController();
    const timer =
      deadline &&
      setTimeout(
        () =>
          deadline.abort(
            new PromptstoreError(`evaluation ${id}: not ended within ${options.timeoutMs} ms`, {
              status: 0,
              code: "timeout",
              request: `GET ${path(id, "/events")}`,
            }),
          ),
        options.timeoutMs,
      );
    const signals = [options.signal, this.closed, deadline?.signal];
    const interval = options.intervalMs ?? 1_000;
    try {
      let failures = 0;
      for (;;) {
        let wait: number | undefined;
        try {
          const ended = await this.followOnce(id, signals, options.onProgress);
          if (ended !== undefined) return ended;
          failures = 0;
        } catch (error) {
          const by = signals.find((s) => s?.aborted);
          if (by) throw by.reason ?? error;
          if (!transient(error) || failures >= this.http.retries) throw error;
          failures++;
          const retryAfter = (error as PromptstoreError).retryAfter;
          if (retryAfter !== undefined) wait = Math.min(retryAfter * 1000, this.http.maxRetryAfterMs);
        }
        await sleepAny(wait ?? interval + backoff(failures, this.http.baseDelayMs, this.http.maxDelayMs), signals);
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /** One connection of the progress stream: the evaluation once `done` came, else undefined when it ended early. */
  private async followOnce(
    id: string,
    signals: (AbortSignal | undefined)[],
    onProgress: WaitOptions["onProgress"],
  ): Promise<Evaluation | undefined> {
    const streamed = await openStreamed(this.http, path(id, "/events"), {
      accept: "text/event-stream",
      idleMs: IDLE_MS,
      signals,
    });
    const label = `GET ${path(id, "/events")}`;
    let ended: Evaluation | undefined;
    let failed: PromptstoreError | undefined;
    const parser = new SseParser({
      onMessage: (message) => {
        if (ended !== undefined || failed !== undefined) return;
        let data: unknown;
        try {
          data = JSON.parse(message.data);
        } catch {
          return;
        }
        if (message.type === "done") ended = data as Evaluation;
        else if (message.type === "progress") onProgress?.(data as EvaluationProgress);
        else if (message.type === "error") {
          // The server could not go on (its log has the request id): a failure worth trying again.
          const { code, message: text } = (data ?? {}) as { code?: unknown; message?: unknown };
          failed = new PromptstoreError(typeof text === "string" ? text : `${label}: the stream failed`, {
            status: 500,
            code: typeof code === "string" ? code : "internal",
            requestId: streamed.res.headers.get("x-request-id") ?? undefined,
            request: label,
          });
        }
      },
    });
    try {
      for await (const chunk of streamed.chunks) {
        parser.push(chunk);
        if (ended !== undefined || failed !== undefined) break;
      }
    } finally {
      parser.end();
      streamed.close();
    }
    if (failed !== undefined) throw failed;
    return ended;
  }

  private async call<T>(method: string, route: string, options: Parameters<typeof request>[3]): Promise<T> {
    return (await request<T>(this.http, method, route, options)).data as T;
  }
}

/** Waits `ms`, or rejects with the reason of the first of `signals` to abort. */
async function sleepAny(ms: number, signals: (AbortSignal | undefined)[]): Promise<void> {
  const controller = new AbortController();
  const stops = signals.map((signal) => follow(signal, controller));
  try {
    await sleep(ms, controller.signal);
  } finally {
    for (const stop of stops) stop();
  }
}
