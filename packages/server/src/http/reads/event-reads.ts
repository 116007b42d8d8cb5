import type { PromptEvent } from "@promptstore/core/events";
import type { Caller } from "../../service/access.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { cachedOf } from "./cached-read.js";
import { type CachedRead, PRODUCTION_READ, type ReadCache } from "./read-cache.js";
import { v2ReadJson } from "./read-json.js";

const ENVELOPE_HEAD = '{"success":true,"data":';
const VERSION_KEY = '"version":"';
const PRODUCTION_KEY = '"production_version":';
const HASH_LENGTH = 64;

/**
 * Whether a v2 read (v2ReadJson's bytes) serves what the event says production and latest are, read where
 * v2ReadJson writes them instead of parsing the document. The first `"version":"` is the read's own: the
 * fields before it are strings, whose quotes are escaped, and sections, which have no such key.
 */
function servesEvent(text: string, event: PromptEvent, expected: string | null): boolean {
  const at = text.indexOf(VERSION_KEY, ENVELOPE_HEAD.length);
  if (at < 0) return false;
  const version = text.slice(at + VERSION_KEY.length, at + VERSION_KEY.length + HASH_LENGTH);
  const pointer = text.indexOf(PRODUCTION_KEY, at) + PRODUCTION_KEY.length;
  const production = text.startsWith("null", pointer) ? null : text.slice(pointer + 1, pointer + 1 + HASH_LENGTH);
  return version === expected && production === event.production_version;
}

/**
 * The production read (guarded) an event leads to, as the `data` JSON of `GET /api/v2/prompts/:id`, for the
 * event streams that carry it (`include=read`); for a label's move, the read of that label. It goes through
 * the read cache under the same key as the usual read, so the clients that re-read at the same moment share
 * its one database read. Undefined when the prompt is gone or has already moved past the event: the client
 * then reads for itself.
 */
export function eventReader(
  service: PromptService,
  cache: ReadCache | null,
): (caller: Caller, event: PromptEvent) => Promise<string | undefined> {
  return async (caller, event) => {
    if (event.type === "prompt.deleted") return undefined;
    const label = event.type === "prompt.label_moved" ? event.label : undefined;
    const variant = label === undefined ? PRODUCTION_READ : `v2|${label}|true`;
    const resolve = () => service.resolveRead(caller, event.prompt_id, label === undefined ? {} : { version: label });
    let cached: CachedRead;
    if (cache) {
      const generation = cache.generation(caller.projectId, event.prompt_id);
      cached =
        cache.get(caller.projectId, event.prompt_id, generation, variant) ??
        (await cache.load(caller.projectId, event.prompt_id, generation, variant, () =>
          resolve().then((resolved) => cachedOf(resolved, v2ReadJson)),
        ));
    } else {
      cached = cachedOf(await resolve(), v2ReadJson);
    }
    // Production in a rollout serves two versions: a client assigns its readers itself (it reads both).
    if (!Buffer.isBuffer(cached)) return undefined;
    const text = cached.toString("utf8");
    const expected = label === undefined ? (event.production_version ?? event.latest_version) : event.version;
    if (!text.startsWith(ENVELOPE_HEAD) || !servesEvent(text, event, expected)) return undefined;
    return text.slice(ENVELOPE_HEAD.length, -1);
  };
}
