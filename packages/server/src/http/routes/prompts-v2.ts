import type { FastifyInstance } from "fastify";
import { notFound } from "../../core/errors.js";
import { createPromptBody, listQuery, promptId, publishBody, readQuery, saveVersionBody } from "../../core/schemas.js";
import type { PromptService } from "../../service/prompt-service.js";
import { scopeOf } from "../auth.js";
import { ok } from "../envelope.js";
import { parseInput } from "../validate.js";

/** An id that cannot exist is simply not found: nothing outside the pattern was ever stored. */
function promptIdParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? "";
  if (!promptId.safeParse(id).success) throw notFound(`prompt ${id.slice(0, 64)} not found`);
  return id;
}

export function registerPromptRoutes(app: FastifyInstance, service: PromptService): void {
  const auth = { config: { auth: true } };

  app.get("/api/v2/prompts", auth, async (request) => {
    const query = parseInput(listQuery, request.query, "query");
    return ok(await service.list(scopeOf(request), query));
  });

  app.get("/api/v2/prompts/:id", auth, async (request) => {
    const id = promptIdParam(request.params);
    const query = parseInput(readQuery, request.query, "query");
    return ok(
      await service.read(scopeOf(request), id, {
        version: query.version,
        guard: query.guard === undefined ? true : query.guard === "true",
      }),
    );
  });

  app.get("/api/v2/prompts/:id/versions", auth, async (request) => {
    return ok(await service.listVersions(scopeOf(request), promptIdParam(request.params)));
  });

  app.post("/api/v2/prompts", auth, async (request, reply) => {
    const body = parseInput(createPromptBody, request.body, "body");
    reply.code(201);
    return ok(await service.create(scopeOf(request), body));
  });

  app.put("/api/v2/prompts/:id", auth, async (request) => {
    const id = promptIdParam(request.params);
    const body = parseInput(saveVersionBody, request.body, "body");
    return ok(await service.save(scopeOf(request), id, body));
  });

  app.post("/api/v2/prompts/:id/publish", auth, async (request) => {
    const id = promptIdParam(request.params);
    const body = parseInput(publishBody, request.body ?? {}, "body");
    return ok(await service.publish(scopeOf(request), id, body.version ?? "latest"));
  });
}
