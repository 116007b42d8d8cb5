import type { FastifyInstance } from "fastify";
import type { PromptService } from "../../service/prompt-service.js";
import { callerOf } from "../auth.js";
import { sendCachedRead } from "../cached-read.js";
import type { Metrics } from "../metrics.js";
import type { ReadCache } from "../read-cache.js";
import { v1ReadJson } from "../read-json.js";
import { promptIdParam } from "./params.js";

/** The only v1 endpoint: production (else latest) with the guard; query parameters are ignored. */
export function registerV1Routes(
  app: FastifyInstance,
  service: PromptService,
  cache: ReadCache | null,
  metrics?: Metrics,
): void {
  // Not async: a cache hit is answered without a promise.
  app.get("/api/v1/prompts/:id", { config: { auth: true } }, (request, reply) => {
    const id = promptIdParam(request.params);
    const caller = callerOf(request);
    return sendCachedRead(request, reply, cache, caller, id, "v1", {
      resolve: () => service.resolveRead(caller, id),
      render: v1ReadJson,
      served: metrics && ((arm) => metrics.countRead("production", arm)),
    });
  });
}
