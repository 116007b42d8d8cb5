/**
 * What `record()` takes and keeps: the read an outcome is about, the outcome's fields checked against the
 * server's bounds (packages/core/src/outcomes.ts: a batch with one malformed outcome is refused whole, so
 * nothing malformed may reach it), and the compact entry the buffer holds until it is sent.
 */
import { FULL_HASH } from "../version-ref.js";

/** What `record()` is told about one answer (docs/outcomes.md). */
export interface OutcomeReport {
  /** Whether the application could use the answer: parsed, not refused, no error. */
  ok: boolean;
  /** How long the answer took, in milliseconds (0 to 3 600 000). */
  latency_ms?: number | undefined;
  /** A user's feedback or an online check, 0 to 1. */
  score?: number | undefined;
  /** The answer's tokens, each a whole number from 0. */
  tokens?: { input?: number | undefined; output?: number | undefined } | undefined;
  /** Up to 10 string pairs (keys 1 to 100 characters, values up to 200): checked by the server, not stored. */
  tags?: Record<string, string> | undefined;
}

/** What `record()` needs of a read: what `get()` returned (a {@link Prompt}). */
export interface RecordableRead {
  readonly id: string;
  readonly version: string;
  readonly label: string;
  readonly rollout?: { readonly arm: string } | null | undefined;
  readonly fallback?: boolean | undefined;
}

/** What {@link Promptstore.outcomeStats} reports. `recorded` = `sent` + `refused` + `dropped` + `pending`. */
export interface OutcomeStats {
  /** Outcomes `record()` took into the buffer. */
  recorded: number;
  /** Outcomes the server accepted. */
  sent: number;
  /** Outcomes the server refused: one by one (a version it cannot place), or a whole batch it would not take (400, 401, 403, 404). */
  refused: number;
  /** Outcomes dropped: the oldest when the buffer was full, or what `close()` could not send. */
  dropped: number;
  /** `record()` calls whose read or values were not valid: never buffered (each kind of problem is told to `onError` once). */
  invalid: number;
  /** Outcomes waiting in the buffer or being sent. */
  pending: number;
}

/** The wire fields of a read, found once per read object. */
export interface ReadRef {
  readonly prompt: string;
  readonly version: string;
  readonly label: string | undefined;
  readonly arm: "current" | "candidate" | undefined;
  /** The JSON every outcome of this read starts with: `{"prompt":…,"version":…,"label":…,"arm":…,"ok":`. */
  readonly head: string;
}

/** One outcome in the buffer: numbers kept as they came, the time in ms; made into JSON when sent. */
export interface Entry {
  readonly ref: ReadRef;
  readonly ok: boolean;
  readonly latency: number | undefined;
  readonly score: number | undefined;
  readonly tokensIn: number | undefined;
  readonly tokensOut: number | undefined;
  readonly tags: Record<string, string> | undefined;
  /** Date.now() when it was recorded: sent as `at`, so that a batch sent late is counted when it happened. */
  readonly at: number;
}

export const LIMITS = {
  perBatch: 1000,
  latencyMs: 3_600_000,
  tokens: 100_000_000,
  tags: 10,
  tagKeyLength: 100,
  tagValueLength: 200,
  serving: 1000,
} as const;

const PROMPT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const LABEL_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const LONE_SURROGATE = /\p{Cs}/u;

/** A string the server takes as text: well-formed Unicode, no NUL. */
function isText(value: string): boolean {
  return !value.includes("\u0000") && !LONE_SURROGATE.test(value);
}

/**
 * The label a read names on the wire: a label's name, or none for a read of `latest` or by version (the
 * read says `latest` or `version`: they are not labels).
 */
export function wireLabel(label: unknown): string | undefined | null {
  if (label === "latest" || label === "version") return undefined;
  return typeof label === "string" && LABEL_NAME.test(label) ? label : null;
}

/** Frozen reads (every read `get()` returns) have their fields found once. */
const refs = new WeakMap<object, ReadRef | string>();

/** The read's wire fields, or why it cannot be recorded. */
export function readRef(read: unknown): ReadRef | string {
  if (typeof read !== "object" || read === null) return "read: must be what get() returned";
  const known = refs.get(read);
  if (known !== undefined) return known;
  const found = findRef(read as Partial<RecordableRead>);
  if (Object.isFrozen(read)) refs.set(read, found);
  return found;
}

function findRef(read: Partial<RecordableRead>): ReadRef | string {
  if (read.fallback === true) return "read: a fallback, not a version the service served";
  const { id, version } = read;
  if (typeof id !== "string" || !PROMPT_ID.test(id)) return "read.id: must be a prompt's id";
  if (typeof version !== "string" || !FULL_HASH.test(version)) return "read.version: must be a version's full hash";
  const label = wireLabel(read.label);
  if (label === null) return "read.label: must be a label's name, latest or version";
  const arm = read.rollout?.arm;
  if (arm !== undefined && arm !== "current" && arm !== "candidate")
    return "read.rollout.arm: must be current or candidate";
  // Ids, hashes, labels and arms need no escaping: the patterns above hold them to [a-z0-9_-].
  const head =
    `{"prompt":"${id}","version":"${version}"` +
    (label === undefined ? "" : `,"label":"${label}"`) +
    (arm === undefined ? "" : `,"arm":"${arm}"`) +
    `,"ok":`;
  return { prompt: id, version, label, arm, head };
}

const nothing = (value: unknown): value is undefined | null => value === undefined || value === null;
const within = (value: unknown, max: number): value is number =>
  typeof value === "number" && value >= 0 && value <= max;
const count = (value: unknown): value is number => within(value, LIMITS.tokens) && Number.isInteger(value);

/** The entry for an outcome, or why it cannot be kept (the message names the field, as the server would). */
export function entryOf(ref: ReadRef, outcome: OutcomeReport, at: number): Entry | string {
  if (typeof outcome !== "object" || outcome === null) return "outcome: must be an object with ok";
  const { ok, latency_ms, score, tokens, tags } = outcome;
  if (ok !== true && ok !== false) return "ok: must be true or false";
  if (!nothing(latency_ms) && !within(latency_ms, LIMITS.latencyMs)) {
    return "latency_ms: must be a number from 0 to 3600000";
  }
  if (!nothing(score) && !within(score, 1)) return "score: must be a number from 0 to 1";
  let tokensIn: number | undefined;
  let tokensOut: number | undefined;
  if (!nothing(tokens)) {
    if (typeof tokens !== "object") return "tokens: must be an object with input and output";
    if (!nothing(tokens.input)) {
      if (!count(tokens.input)) return "tokens.input: must be a whole number from 0 to 100000000";
      tokensIn = tokens.input;
    }
    if (!nothing(tokens.output)) {
      if (!count(tokens.output)) return "tokens.output: must be a whole number from 0 to 100000000";
      tokensOut = tokens.output;
    }
  }
  let kept: Record<string, string> | undefined;
  if (!nothing(tags)) {
    const checked = tagsOf(tags);
    if (typeof checked === "string") return checked;
    kept = checked;
  }
  return {
    ref,
    ok,
    latency: nothing(latency_ms) ? undefined : latency_ms,
    score: nothing(score) ? undefined : score,
    tokensIn,
    tokensOut,
    tags: kept,
    at,
  };
}

/** A copy of the tags (the caller may change its object later), or why they cannot be sent. */
function tagsOf(tags: unknown): Record<string, string> | undefined | string {
  if (typeof tags !== "object" || tags === null || Array.isArray(tags)) return "tags: must be an object of strings";
  const copy: Record<string, string> = {};
  let n = 0;
  for (const key in tags) {
    if (!Object.hasOwn(tags, key)) continue;
    if (++n > LIMITS.tags) return "tags: must have at most 10 entries";
    const value = (tags as Record<string, unknown>)[key];
    if (key.length < 1 || key.length > LIMITS.tagKeyLength || !isText(key)) {
      return "tags: keys must be 1 to 100 characters of text";
    }
    if (typeof value !== "string" || value.length > LIMITS.tagValueLength || !isText(value)) {
      return "tags: values must be strings of at most 200 characters of text";
    }
    copy[key] = value;
  }
  return n === 0 ? undefined : copy;
}

let isoSecond = Number.NaN;
let isoPrefix = "";

/** `new Date(ms).toISOString()`, at a fraction of its cost: the part down to the second is made once a second. */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -5);
  }
  const milli = ms - second * 1000;
  return `${isoPrefix}.${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z`;
}

/** An entry as the server takes it, as JSON: the read's head, then the fields given, then `at`. */
export function outcomeJson(entry: Entry): string {
  let json = entry.ref.head + (entry.ok ? "true" : "false");
  if (entry.latency !== undefined) json += `,"latency_ms":${entry.latency}`;
  if (entry.score !== undefined) json += `,"score":${entry.score}`;
  if (entry.tokensIn !== undefined || entry.tokensOut !== undefined) {
    json +=
      entry.tokensIn === undefined
        ? `,"tokens":{"output":${entry.tokensOut}}`
        : entry.tokensOut === undefined
          ? `,"tokens":{"input":${entry.tokensIn}}`
          : `,"tokens":{"input":${entry.tokensIn},"output":${entry.tokensOut}}`;
  }
  if (entry.tags !== undefined) json += `,"tags":${JSON.stringify(entry.tags)}`;
  return `${json},"at":"${isoTime(entry.at)}"}`;
}
