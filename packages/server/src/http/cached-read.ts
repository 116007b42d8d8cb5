import type { PromptView } from "@promptstore/core/views";
import type { FastifyReply } from "fastify";
import type { Scope } from "../service/prompt-service.js";
import { ok } from "./envelope.js";
import type { ReadCache } from "./read-cache.js";

/**
 * Serves a read from the cache when it can, else reads, serializes once and caches the bytes.
 * `variant` names everything besides the prompt that shaped the bytes (surface, version, guard).
 * A hit is answered synchronously and returns undefined (the handler then awaits nothing); a miss
 * returns the promise of the read.
 */
export function sendCachedRead(
  reply: FastifyReply,
  cache: ReadCache | null,
  scope: Scope,
  promptId: string,
  variant: string,
  read: () => Promise<PromptView>,
  shape: (view: PromptView) => unknown = (view) => view,
): undefined | Promise<FastifyReply> {
  reply.type("application/json; charset=utf-8");
  const generation = cache?.generation(scope.projectId, promptId);
  if (cache && generation !== undefined) {
    const hit = cache.get(scope.projectId, promptId, generation, variant);
    if (hit) {
      reply.send(hit);
      return undefined;
    }
  }
  return read().then((view) => {
    const bytes = Buffer.from(JSON.stringify(ok(shape(view))));
    if (cache && generation !== undefined) cache.set(scope.projectId, promptId, generation, variant, bytes);
    return reply.send(bytes);
  });
}
