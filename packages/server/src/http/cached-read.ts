import type { FastifyReply } from "fastify";
import type { Scope } from "../service/prompt-service.js";
import type { PromptView } from "../service/views.js";
import { ok } from "./envelope.js";
import type { ReadCache } from "./read-cache.js";

/**
 * Serves a read from the cache when it can, else reads, serializes once and caches the bytes.
 * `variant` names everything besides the prompt that shaped the bytes (surface, version, guard).
 */
export async function sendCachedRead(
  reply: FastifyReply,
  cache: ReadCache | null,
  scope: Scope,
  promptId: string,
  variant: string,
  read: () => Promise<PromptView>,
  shape: (view: PromptView) => unknown = (view) => view,
): Promise<FastifyReply> {
  reply.type("application/json; charset=utf-8");
  if (!cache) return reply.send(JSON.stringify(ok(shape(await read()))));
  const generation = cache.generation(scope.projectId, promptId);
  const hit = cache.get(scope.projectId, promptId, generation, variant);
  if (hit) return reply.send(hit);
  const bytes = Buffer.from(JSON.stringify(ok(shape(await read()))));
  cache.set(scope.projectId, promptId, generation, variant, bytes);
  return reply.send(bytes);
}
