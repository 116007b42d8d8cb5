import type { PromptEvent } from "@promptstore/core/events";
import type { Caller } from "../service/access.js";
import type { PromptService } from "../service/prompt-service.js";
import { PRODUCTION_READ, type ReadCache } from "./read-cache.js";
import { v2ReadJson } from "./read-json.js";

const ENVELOPE_HEAD = '{"success":true,"data":';

/**
 * The production read (guarded) an event leads to, as the `data` JSON of `GET /api/v2/prompts/:id`, for the
 * event streams that carry it (`include=read`). It goes through the read cache under the same key as the
 * usual read, so the clients that re-read at the same moment share its one database read. Undefined when
 * the prompt is gone or has already moved past the event: the client then reads for itself.
 */
export function eventReader(
  service: PromptService,
  cache: ReadCache | null,
): (caller: Caller, event: PromptEvent) => Promise<string | undefined> {
  return async (caller, event) => {
    if (event.type === "prompt.deleted") return undefined;
    const read = () => service.readDocument(caller, event.prompt_id, {}).then((r) => Buffer.from(v2ReadJson(r)));
    let body: Buffer;
    if (cache) {
      const generation = cache.generation(caller.projectId, event.prompt_id);
      body =
        cache.get(caller.projectId, event.prompt_id, generation, PRODUCTION_READ) ??
        (await cache.load(caller.projectId, event.prompt_id, generation, PRODUCTION_READ, read));
    } else {
      body = await read();
    }
    const text = body.toString("utf8");
    if (!text.startsWith(ENVELOPE_HEAD)) return undefined;
    const data = text.slice(ENVELOPE_HEAD.length, -1);
    const view = JSON.parse(data) as { version: string; production_version: string | null };
    const serves = event.production_version ?? event.latest_version;
    if (view.version !== serves || view.production_version !== event.production_version) return undefined;
    return data;
  };
}
