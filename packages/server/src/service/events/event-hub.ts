import { planLimits } from "@promptstore/core/accounts/plans";
import { AppError } from "@promptstore/core/errors";
import { type ChangeEvent, isPromptEvent, type PromptEvent } from "@promptstore/core/events";
import type { EventStore } from "../../store/events.js";
import type { Caller } from "../access.js";
import { eventWithoutAuthors, seesAuthors } from "../authors.js";
import { inTurn } from "../loop-turns.js";
import type { ChangeBus } from "./change-bus.js";

/** Where a stream's text goes (the HTTP response); `end` closes it. */
export interface StreamSink {
  /** Returns false when the client reads too slowly and the stream must end. */
  write(text: string | Buffer): boolean;
  end(): void;
}

export interface HubOptions {
  heartbeatMs?: number;
  /** The most events a reconnecting client is replayed; beyond it, a reset is cheaper for both sides. */
  maxReplay?: number;
  /**
   * Is this API key still valid? Asked for every open stream when keys or plans change, and every
   * `recheckMs` anyway: a revocation by the CLI on SQLite reaches no running server by notification.
   */
  keyIsValid: (key: string) => Promise<boolean>;
  recheckMs?: number;
  /**
   * The production read (guard on, the v2 read's `data` as JSON) that the event leaves the prompt serving,
   * or undefined when there is none or the prompt has moved on since. Streams opened with `include=read`
   * get it in each live event, so a client holding the prompt needs no request to serve the change.
   */
  readOf?: (caller: Caller, event: PromptEvent) => Promise<string | undefined>;
  /** Streams written to per piece of a fan-out (FAN_OUT_PIECE). */
  fanOutPiece?: number;
}

/** What a stream asked for besides the events themselves. */
export interface StreamOptions {
  /** Live events carry the production read they lead to (`include=read`). */
  withReads?: boolean;
}

interface Subscriber {
  caller: Caller;
  key: string;
  sink: StreamSink;
  live: boolean;
  withReads: boolean;
}

/** One project's subscribers and how far its events have been read, with one task at a time. */
interface Feed {
  subscribers: Set<Subscriber>;
  /** The id of the last event sent to live subscribers; undefined until first read. */
  cursor: number | undefined;
  /** The tail of this feed's task chain: pumps and joins run in order, never concurrently. */
  tail: Promise<void>;
  pumpQueued: boolean;
}

const DEFAULT_HEARTBEAT_MS = 15_000;
/** One Buffer for every stream's heartbeat, as for a batch: a sink may frame it once for all (routes/events.ts). */
const HEARTBEAT = Buffer.from(": heartbeat\n\n");
const DEFAULT_MAX_REPLAY = 1_000;
const DEFAULT_RECHECK_MS = 30_000;
/**
 * Streams written to per piece of a feed's fan-out (loop-turns.ts): a write to a socket costs 20 to 50 µs, so
 * about 2 to 5 ms. Written in one go, 10 000 streams held the event loop 250 to 500 ms a publish, and every
 * read of every project waited behind them.
 */
export const FAN_OUT_PIECE = 100;
/** What a client refused for the stream cap is told to wait: a slot frees when some stream ends. */
export const STREAM_CAP_RETRY_SECONDS = 15;

/** `read`: the JSON of the production read the event leads to, spliced in as the data's `read` field. */
export function formatEvent(event: ChangeEvent, read?: string): string {
  const data = JSON.stringify(event);
  const withRead = read === undefined ? data : `${data.slice(0, -1)},"read":${read}}`;
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${withRead}\n\n`;
}

/**
 * The batch as each kind of stream is sent it, encoded once per kind however many streams there are: with or
 * without the reads (`include=read`), and with or without the authors of releases (docs/decisions.md).
 */
function batchTexts(batch: ChangeEvent[], reads: (string | undefined)[] | undefined): (s: Subscriber) => Buffer {
  const names = batch.some((event) => isPromptEvent(event) && event.release !== undefined);
  const texts = new Map<string, Buffer>();
  return (subscriber) => {
    const hide = names && !seesAuthors(subscriber.caller);
    const rich = subscriber.withReads && reads !== undefined;
    const kind = `${hide}:${rich}`;
    let text = texts.get(kind);
    if (text === undefined) {
      const events = hide ? batch.map(shownWithoutAuthors) : batch;
      text = Buffer.from(events.map((event, i) => formatEvent(event, rich ? reads?.[i] : undefined)).join(""));
      texts.set(kind, text);
    }
    return text;
  };
}

/** Only a prompt's release events name anyone; a project's event names no one. */
const shownWithoutAuthors = (event: ChangeEvent): ChangeEvent =>
  isPromptEvent(event) ? eventWithoutAuthors(event) : event;

function control(type: "ready" | "reset", lastId: number, reason?: string): string {
  const data = reason === undefined ? { last_event_id: lastId } : { last_event_id: lastId, reason };
  return `id: ${lastId}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Streams each project's change events to its open event streams. A change on any instance reaches this one
 * on the bus; the feed of that project then reads the events after its cursor from the log, once for all
 * its subscribers, so every stream sees every event of its project, in id order, exactly once, whichever
 * instance wrote it. A stream joins a feed as a task of that feed: its replay ends where live events begin.
 */
export class EventHub {
  private readonly feeds = new Map<string, Feed>();
  private readonly openPerOrg = new Map<string, number>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly recheck: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private readonly maxReplay: number;
  private readonly fanOutPiece: number;
  private closed = false;

  constructor(
    private readonly events: EventStore,
    bus: ChangeBus,
    private readonly options: HubOptions,
  ) {
    this.maxReplay = options.maxReplay ?? DEFAULT_MAX_REPLAY;
    this.fanOutPiece = options.fanOutPiece ?? FAN_OUT_PIECE;
    this.unsubscribe = bus.subscribe((change) => {
      if (change.kind === "prompt" || change.kind === "events") {
        const feed = this.feeds.get(change.projectId);
        if (feed) this.pump(feed, change.projectId);
      } else if (change.kind === "reset") {
        // Notifications may have been lost: every feed reads what it missed.
        for (const [projectId, feed] of this.feeds) this.pump(feed, projectId);
      } else if (change.kind === "tenants") {
        void this.recheckKeys();
      }
      // `deaf`: nothing to do until the `reset` that ends it, which reads what was missed.
    });
    this.heartbeat = setInterval(() => void this.broadcastAll(HEARTBEAT), options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    this.heartbeat.unref();
    this.recheck = setInterval(() => void this.recheckKeys(), options.recheckMs ?? DEFAULT_RECHECK_MS);
    this.recheck.unref();
  }

  /** How many streams are open, for tests and metrics. */
  get size(): number {
    let n = 0;
    for (const feed of this.feeds.values()) n += feed.subscribers.size;
    return n;
  }

  /**
   * Takes one of the organization's stream slots, or throws 429 when its plan's cap is reached. Called
   * before the response starts, so the refusal is an ordinary failure envelope.
   */
  reserve(caller: Caller): () => void {
    if (this.closed) throw new AppError("unavailable", "the server is shutting down");
    const cap = planLimits(caller.plan).eventStreamsPerOrg;
    const open = this.openPerOrg.get(caller.orgId) ?? 0;
    if (cap !== null && open >= cap) {
      throw new AppError(
        "rate_limited",
        `too many event streams: the ${caller.plan} plan allows ${cap} open streams per organization`,
      );
    }
    this.openPerOrg.set(caller.orgId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.openPerOrg.get(caller.orgId) ?? 1) - 1;
      if (left <= 0) this.openPerOrg.delete(caller.orgId);
      else this.openPerOrg.set(caller.orgId, left);
    };
  }

  /**
   * Starts a stream: replays what a reconnecting client missed (or tells it to reset), says `ready`, then
   * sends live events. Returns the function that detaches it.
   */
  open(
    caller: Caller,
    key: string,
    lastEventId: string | undefined,
    sink: StreamSink,
    options: StreamOptions = {},
  ): () => void {
    const subscriber: Subscriber = { caller, key, sink, live: false, withReads: options.withReads === true };
    const feed = this.feedOf(caller.projectId);
    feed.subscribers.add(subscriber);
    this.enqueue(feed, async () => {
      if (!feed.subscribers.has(subscriber)) return;
      const cursor = await this.cursorOf(feed, caller.projectId);
      const opening = await this.opening(caller, lastEventId, cursor);
      if (!feed.subscribers.has(subscriber)) return;
      subscriber.live = true;
      this.send(feed, subscriber, opening);
    });
    return () => this.detach(caller.projectId, subscriber);
  }

  /** The id of the project's latest recorded event (0 when none). */
  lastEventId(projectId: string): Promise<number> {
    return this.events.lastId(projectId);
  }

  /** Ends every stream (shutdown): clients reconnect, to another instance or to this one restarted. */
  closeAll(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearInterval(this.recheck);
    this.unsubscribe();
    for (const [projectId, feed] of this.feeds) {
      for (const subscriber of feed.subscribers) this.detach(projectId, subscriber, true);
    }
  }

  /** What a new stream is sent first: a replay and `ready`, or `reset`. */
  private async opening(caller: Caller, lastEventId: string | undefined, cursor: number): Promise<string> {
    const { projectId } = caller;
    if (lastEventId === undefined) return control("ready", cursor);
    const after = /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : Number.NaN;
    if (!Number.isSafeInteger(after) || after > cursor) {
      return control("reset", cursor, "Last-Event-ID is not an event of this project's stream");
    }
    if (after < (await this.events.prunedThrough())) {
      return control("reset", cursor, "events after Last-Event-ID are no longer kept");
    }
    const missed = (await this.events.since(projectId, after, this.maxReplay + 1)).filter((e) => e.id <= cursor);
    if (missed.length > this.maxReplay) {
      return control("reset", cursor, `more than ${this.maxReplay} events were missed`);
    }
    const shown = seesAuthors(caller) ? missed : missed.map(shownWithoutAuthors);
    return shown.map((event) => formatEvent(event)).join("") + control("ready", cursor);
  }

  private feedOf(projectId: string): Feed {
    let feed = this.feeds.get(projectId);
    if (!feed) {
      feed = { subscribers: new Set(), cursor: undefined, tail: Promise.resolve(), pumpQueued: false };
      this.feeds.set(projectId, feed);
    }
    return feed;
  }

  private async cursorOf(feed: Feed, projectId: string): Promise<number> {
    if (feed.cursor === undefined) feed.cursor = await this.events.lastId(projectId);
    return feed.cursor;
  }

  private enqueue(feed: Feed, task: () => Promise<void>): void {
    feed.tail = feed.tail.then(task).catch(() => {
      // A failed read (database gone for a moment) is retried by the next change, or by a reset when the
      // channel reconnects; the feed must not stop for it.
    });
  }

  /** Reads the events after the feed's cursor and sends them to its live subscribers. Coalesced. */
  private pump(feed: Feed, projectId: string): void {
    if (feed.pumpQueued) return;
    feed.pumpQueued = true;
    this.enqueue(feed, async () => {
      feed.pumpQueued = false;
      if (feed.subscribers.size === 0) return;
      if (feed.cursor === undefined) {
        await this.cursorOf(feed, projectId);
        return;
      }
      for (;;) {
        const batch = await this.events.since(projectId, feed.cursor, 500);
        if (batch.length === 0) return;
        const reads = await this.readsOf(feed, batch);
        feed.cursor = (batch[batch.length - 1] as ChangeEvent).id;
        await this.fanOut(feed, batchTexts(batch, reads));
        if (batch.length < 500) return;
      }
    });
  }

  /**
   * The read each event leads to, for the streams that asked (undefined when none did). Earlier events of
   * the same prompt in the batch are already superseded, so only the last is worth a read. One read per
   * prompt and instance, shared with the herd of clients that may read it at the same moment (the read
   * cache's single flight).
   */
  private async readsOf(feed: Feed, batch: ChangeEvent[]): Promise<(string | undefined)[] | undefined> {
    const readOf = this.options.readOf;
    if (!readOf) return undefined;
    let asker: Subscriber | undefined;
    for (const subscriber of feed.subscribers) if (subscriber.live && subscriber.withReads) asker = subscriber;
    if (!asker) return undefined;
    // A project's event (no prompt) leads to no read.
    const lastOf = new Map<string, PromptEvent>();
    for (const event of batch) if (isPromptEvent(event)) lastOf.set(event.prompt_id, event);
    const caller = asker.caller;
    return Promise.all(
      batch.map((event) =>
        isPromptEvent(event) && lastOf.get(event.prompt_id) === event
          ? readOf(caller, event).catch(() => undefined)
          : undefined,
      ),
    );
  }

  /**
   * Sends each live subscriber its text: at once when the feed has a piece's worth, else a piece at a time, each
   * in its turn of the event loop. A stream that leaves meanwhile is skipped. A publish's fan-out runs as the
   * feed's task, so a stream that joins meanwhile goes live after it (its opening is the next task); the
   * heartbeat's needs no such order, since every write is whole.
   */
  private async fanOut(feed: Feed, textFor: (subscriber: Subscriber) => string | Buffer): Promise<void> {
    const sendPiece = (piece: Iterable<Subscriber>) => {
      for (const subscriber of piece) {
        if (subscriber.live && feed.subscribers.has(subscriber)) this.send(feed, subscriber, textFor(subscriber));
      }
    };
    const size = this.fanOutPiece;
    if (feed.subscribers.size <= size) return sendPiece(feed.subscribers);
    const targets = [...feed.subscribers];
    for (let from = 0; from < targets.length; from += size) {
      await inTurn(() => sendPiece(targets.slice(from, from + size)));
    }
  }

  private send(feed: Feed, subscriber: Subscriber, text: string | Buffer): void {
    if (!subscriber.sink.write(text)) this.detach(subscriber.caller.projectId, subscriber, true, feed);
  }

  /** The heartbeat, to every live stream of every feed: a feed at a time, each in pieces as a publish is. */
  private async broadcastAll(text: Buffer): Promise<void> {
    for (const feed of [...this.feeds.values()]) await this.fanOut(feed, () => text);
  }

  private detach(projectId: string, subscriber: Subscriber, end = false, known?: Feed): void {
    const feed = known ?? this.feeds.get(projectId);
    if (!feed?.subscribers.delete(subscriber)) return;
    if (feed.subscribers.size === 0) this.feeds.delete(projectId);
    if (end) subscriber.sink.end();
  }

  /** Keys were revoked or plans changed somewhere: streams whose key no longer works end. */
  private async recheckKeys(): Promise<void> {
    const verdicts = new Map<string, Promise<boolean>>();
    for (const [projectId, feed] of this.feeds) {
      for (const subscriber of feed.subscribers) {
        let valid = verdicts.get(subscriber.key);
        if (!valid) {
          valid = this.options.keyIsValid(subscriber.key).catch(() => true);
          verdicts.set(subscriber.key, valid);
        }
        if (!(await valid)) this.detach(projectId, subscriber, true);
      }
    }
  }
}
