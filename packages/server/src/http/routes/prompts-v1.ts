import type { PromptView } from "@promptstore/core/views";
import type { FastifyInstance } from "fastify";
import type { PromptService } from "../../service/prompt-service.js";
import { scopeOf } from "../auth.js";
import { sendCachedRead } from "../cached-read.js";
import type { ReadCache } from "../read-cache.js";
import { promptIdParam } from "./params.js";

/** The v1 read shape: frozen original fields, then the later additions. Never remove or rename one. */
export function toV1(view: PromptView) {
  return {
    id: view.id,
    prompt: view.prompt,
    sections: view.sections,
    tools: view.tools ?? [],
    version: view.version,
    created_at: view.created_at,
    updated_at: view.updated_at,
    name: view.name,
    description: view.description,
    variables: view.variables,
    label: view.label,
    production_version: view.production_version,
  };
}

/** The only v1 endpoint: production (else latest) with the guard; query parameters are ignored. */
export function registerV1Routes(app: FastifyInstance, service: PromptService, cache: ReadCache | null): void {
  // Not async: a cache hit is answered without a promise.
  app.get("/api/v1/prompts/:id", { config: { auth: true } }, (request, reply) => {
    const id = promptIdParam(request.params);
    const scope = scopeOf(request);
    return sendCachedRead(reply, cache, scope, id, "v1", () => service.read(scope, id), toV1);
  });
}
