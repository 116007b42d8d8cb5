import { type PromptstoreError, PromptstoreNetworkError } from "./errors.js";
import type { Hooks } from "./hooks.js";
import { answerError, buildUrl, type HttpSettings, headersFor, sleep } from "./http.js";
import type { PromptMemory } from "./memory.js";
import type { PromptstoreOptions, StreamState } from "./options.js";
import { readEventStream, SseParser } from "./sse.js";
import type { PromptEvent, ReadyEvent, ResetEvent } from "./types.js";

/**
 * The prompt events this client applies. Any other type is ignored, the project's own events included
 * (`label.requirement_changed` names no prompt and changes nothing held; docs/events.md).
 */
const EVENT_TYPES = new Set<string>([
  "prompt.created",
  "prompt.version_saved",
  "prompt.published",
  "prompt.deleted",
  "prompt.label_moved",
  "prompt.label_removed",
  "prompt.rollout_changed",
  "release.requested",
  "release.approved",
  "release.rejected",
  "evaluation.completed",
  "include.outdated",
] satisfies PromptEvent["type"][]);
/** Events that change no prompt: told to onEvent, nothing held is touched. */
const TOLD_ONLY = new Set<string>(["evaluation.completed", "include.outdated"] satisfies PromptEvent["type"][]);
const LABEL = "GET /api/v2/events";

/**
 * The change-event stream (`GET /api/v2/events`) of mode `watch`: opened once, reconnected with backoff (or
 * after the wait the service names), resumed from the last event id, and applied to the memory it keeps
 * current.
 */
export class ChangeStream {
  state: StreamState = "idle";
  /** The id of the last event received: the next connection's `Last-Event-ID`. */
  lastEventId = "";
  private serverRetryMs: number | undefined;
  private controller: AbortController | undefined;
  private watchdog: ReturnType<typeof setTimeout> | undefined;
  private readyWaiters: ((outcome: boolean | PromptstoreError) => void)[] = [];
  private live = false;
  /** The first connection has ended, live or not: reads no longer wait for it. */
  private attempted = false;
  private attemptWaiters: (() => void)[] = [];

  constructor(
    private readonly http: HttpSettings,
    private readonly options: PromptstoreOptions,
    private readonly memory: PromptMemory,
    private readonly hooks: Hooks,
    private readonly closed: AbortSignal,
  ) {}

  open(): void {
    if (this.closed.aborted || this.state !== "idle") return;
    this.state = "connecting";
    this.hooks.background(this.run());
  }

  /**
   * Resolves true once the stream is live, false when closed or not live within `timeoutMs`; rejects with the
   * service's answer when it refuses the stream for good (an invalid key: 401; a key without access: 403).
   */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.live) return Promise.resolve(true);
    this.open();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (outcome: boolean | PromptstoreError) => {
        clearTimeout(timer);
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        if (typeof outcome === "boolean") resolve(outcome);
        else reject(outcome);
      };
      this.readyWaiters.push(done);
    });
  }

  /** While the first connection is being made: a promise of its end (live or failed), at most `timeoutMs`. */
  firstConnection(): Promise<void> | undefined {
    if (this.attempted || this.state !== "connecting") return undefined;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), this.http.timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.attemptWaiters = this.attemptWaiters.filter((w) => w !== done);
        resolve();
      };
      this.attemptWaiters.push(done);
    });
  }

  /** Ends the connection, its watchdog and every wait for it; called once the client's signal has aborted. */
  close(): void {
    this.live = false;
    this.memory.setLive(false);
    this.state = "closed";
    this.controller?.abort();
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    for (const waiter of [...this.readyWaiters]) waiter(false);
    this.attemptEnded();
  }

  private attemptEnded(): void {
    this.attempted = true;
    for (const waiter of [...this.attemptWaiters]) waiter();
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.closed.aborted) {
      let wait: number | undefined;
      const wasLive = await this.connectOnce().then(
        (outcome) => {
          wait = outcome.waitMs;
          return outcome.wasLive;
        },
        (error: unknown) => {
          if (!this.closed.aborted) this.hooks.error(error);
          return false;
        },
      );
      this.dropped();
      this.attemptEnded();
      if (this.closed.aborted) return;
      if (wasLive) attempt = 0;
      const base = this.serverRetryMs ?? this.options.reconnectDelayMs ?? 1_000;
      const max = this.options.maxReconnectDelayMs ?? 30_000;
      const step = Math.min(max, base * 2 ** attempt);
      const delay = wait !== undefined ? Math.min(wait, max) : step / 2 + Math.random() * (step / 2);
      attempt++;
      try {
        await sleep(delay, this.closed);
      } catch {
        return;
      }
    }
  }

  /** One connection of the stream, until it ends. */
  private async connectOnce(): Promise<{ wasLive: boolean; waitMs?: number }> {
    const controller = new AbortController();
    this.controller = controller;
    this.state = "connecting";
    const resumed = this.lastEventId !== "";
    const headers = headersFor(this.http, {
      accept: "text/event-stream",
      "cache-control": "no-cache",
      ...(resumed ? { "last-event-id": this.lastEventId } : {}),
    });
    const connectTimer = setTimeout(() => controller.abort(), this.http.timeoutMs);
    let res: Response;
    try {
      // include=read: each live event carries the production read it leads to (docs/events.md).
      res = await this.http.fetch(buildUrl(this.http.baseUrl, "/api/v2/events", { include: "read" }), {
        method: "GET",
        headers,
        signal: controller.signal,
      });
    } catch (error) {
      if (this.closed.aborted) return { wasLive: false };
      throw new PromptstoreNetworkError(`${LABEL}: ${(error as Error)?.message ?? error}`, {
        request: LABEL,
        cause: error,
      });
    } finally {
      clearTimeout(connectTimer);
    }
    if (!res.ok || res.body === null) {
      const error = answerError(res, await res.text().catch(() => ""), LABEL);
      const max = this.options.maxReconnectDelayMs ?? 30_000;
      this.hooks.error(error);
      if (res.status === 401 || res.status === 403) for (const waiter of [...this.readyWaiters]) waiter(error);
      // 429: the service names the wait. A server without the stream (404), or a refused key: try again seldom.
      if (error.retryAfter !== undefined && (res.status === 429 || res.status === 503))
        return { wasLive: false, waitMs: error.retryAfter * 1000 };
      if (res.status < 500 && res.status !== 429) return { wasLive: false, waitMs: max };
      return { wasLive: false };
    }
    let wasLive = false;
    const parser = new SseParser({
      onRetry: (ms) => {
        this.serverRetryMs = ms;
      },
      onMessage: (message) => {
        if (message.lastEventId !== "") this.lastEventId = message.lastEventId;
        if (this.closed.aborted) return;
        if (this.onMessage(message.type, message.data, resumed)) wasLive = true;
      },
    });
    parser.lastEventId = this.lastEventId;
    const heartbeat = this.options.heartbeatTimeoutMs ?? 45_000;
    const arm = () => {
      if (this.watchdog !== undefined) clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => controller.abort(), heartbeat);
    };
    arm();
    try {
      await readEventStream(res.body, parser, arm);
    } catch (error) {
      if (!this.closed.aborted && !controller.signal.aborted) {
        this.hooks.error(
          new PromptstoreNetworkError(`${LABEL}: the stream broke: ${(error as Error)?.message ?? error}`, {
            request: LABEL,
            cause: error,
          }),
        );
      }
    } finally {
      if (this.watchdog !== undefined) clearTimeout(this.watchdog);
      this.watchdog = undefined;
      controller.abort();
    }
    return { wasLive };
  }

  /** Applies one message of the stream; true once the stream is live (ready or reset). */
  private onMessage(type: string, data: string, resumed: boolean): boolean {
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return this.live;
    }
    if (type === "ready") {
      const ready = payload as ReadyEvent;
      if (typeof ready.last_event_id === "number" && this.lastEventId === "")
        this.lastEventId = String(ready.last_event_id);
      this.memory.streamReady(resumed);
      this.becameLive();
      return true;
    }
    if (type === "reset") {
      const reset = payload as ResetEvent;
      if (typeof reset.last_event_id === "number") this.lastEventId = String(reset.last_event_id);
      this.memory.streamReset();
      this.becameLive();
      return true;
    }
    if (EVENT_TYPES.has(type)) {
      const event = payload as PromptEvent;
      if (typeof event.prompt_id !== "string") return this.live;
      // An evaluation's end, a stale include: told to onEvent, nothing held is touched.
      if (!TOLD_ONLY.has(event.type)) this.memory.applyEvent(event);
      this.hooks.call(() => this.options.onEvent?.(event));
    }
    return this.live;
  }

  private becameLive(): void {
    this.live = true;
    this.memory.setLive(true);
    this.state = "live";
    for (const waiter of [...this.readyWaiters]) waiter(true);
    this.attemptEnded();
  }

  private dropped(): void {
    if (this.closed.aborted) return;
    this.memory.streamDropped();
    this.live = false;
    this.state = "down";
  }
}
