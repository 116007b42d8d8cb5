import type { FastifyInstance } from "fastify";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { callerOf } from "../guards/auth.js";
import { sendCachedRead } from "../reads/cached-read.js";
import type { ReadCache } from "../reads/read-cache.js";
import { v1ReadJson } from "../reads/read-json.js";
import type { Metrics } from "../telemetry/metrics.js";
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
