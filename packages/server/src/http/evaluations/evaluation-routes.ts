import { notFound } from "@promptstore/core/errors";
import {
  casesQuery,
  EVALUATION_ID,
  evaluationDefaultsBody,
  startEvaluationBody,
} from "@promptstore/core/evaluations/evaluations";
import { draftContent } from "@promptstore/core/playground";
import { versionRef } from "@promptstore/core/schemas";
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Caller } from "../../service/access.js";
import type { EvaluationDefaults } from "../../service/evaluations/evaluation-defaults.js";
import type { EvaluationService } from "../../service/evaluations/evaluation-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { labelParam, promptIdParam } from "../routes/params.js";
import { openEventStream } from "../sse-stream.js";
import { parseInput } from "../validate.js";

export interface EvaluationSurface {
  /** The route's guard: `{ auth: true }` (an API key) or `{ session: true }` (the dashboard). */
  config: FastifyContextConfig;
  caller(request: FastifyRequest): Promise<Caller> | Caller;
  /** Counts a start against the organization's rate limit where the route's guard did not already. */
  countRun?(request: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<void>;
}

/** How often a progress stream looks at its evaluation, and the longest it stays silent (a heartbeat). */
const PROGRESS_POLL_MS = 500;
const PROGRESS_HEARTBEAT_MS = 15_000;

function evaluationIdParam(params: unknown): string {
  const id = (params as { evaluationId?: string }).evaluationId ?? "";
  if (!EVALUATION_ID.test(id)) throw notFound(`evaluation ${id.slice(0, 64)} not found`);
  return id;
}

const requiredRunBody = z
  .strictObject({ version: versionRef.optional(), draft: draftContent.optional() })
  .refine((b) => b.version === undefined || b.draft === undefined, { message: "give version or draft, not both" });
const gateQuery = z.strictObject({ version: versionRef.optional() });

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional(),
});

/**
 * Evaluations (docs/evaluations.md) under `prefix`: `/api/v2` for keys, the dashboard's project prefix for
 * sessions. Same service, same schemas; the service decides permissions.
 */
export function registerEvaluationEndpoints(
  app: FastifyInstance,
  prefix: string,
  surface: EvaluationSurface,
  evaluations: EvaluationService,
  defaults: EvaluationDefaults,
  prompts: PromptService,
): void {
  const options = { config: surface.config };

  // A prompt's default check set (and dataset): read by anyone who reads the prompt, saved by its editors.
  app.get(`${prefix}/prompts/:id/evaluation-defaults`, options, async (request) => {
    const caller = await surface.caller(request);
    return ok(await defaults.get(caller, promptIdParam(request.params)));
  });

  app.put(`${prefix}/prompts/:id/evaluation-defaults`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(evaluationDefaultsBody, request.body, "body");
    return ok(await defaults.save(caller, id, body));
  });

  app.post(`${prefix}/prompts/:id/evaluations`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(startEvaluationBody, request.body, "body");
    await surface.countRun?.(request, reply, caller);
    const view = await evaluations.start(caller, id, body);
    // Started: 202, it runs on. Reused: done already, the whole answer now.
    reply.code(view.status === "running" ? 202 : 200);
    return ok(view);
  });

  // A label's required evaluation (docs/evaluations.md): run it for a version or a draft, and read where a
  // version stands against it.
  app.post(`${prefix}/prompts/:id/labels/:label/evaluations`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const label = labelParam(request.params);
    const body = parseInput(requiredRunBody, request.body ?? {}, "body");
    await surface.countRun?.(request, reply, caller);
    const view = await evaluations.startRequired(caller, id, label, body);
    reply.code(view.status === "running" ? 202 : 200);
    return ok(view);
  });

  app.get(`${prefix}/prompts/:id/labels/:label/gate`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const label = labelParam(request.params);
    const query = parseInput(gateQuery, request.query, "query");
    const version = query.version ?? "latest";
    const state = await prompts.gateState(caller, id, label, version);
    return ok({ label, version, required: state !== null, ...(state ?? {}) });
  });

  app.get(`${prefix}/prompts/:id/evaluations`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const query = parseInput(listQuery, request.query, "query");
    return ok(await evaluations.list(caller, id, query.limit));
  });

  app.get(`${prefix}/evaluations/:evaluationId`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = evaluationIdParam(request.params);
    const query = parseInput(casesQuery, request.query, "query");
    const view = await evaluations.get(caller, id);
    return ok({ ...view, cases: await evaluations.cases(caller, id, query) });
  });

  app.get(`${prefix}/evaluations/:evaluationId/cases`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = evaluationIdParam(request.params);
    const query = parseInput(casesQuery, request.query, "query");
    return ok(await evaluations.cases(caller, id, query));
  });

  app.post(`${prefix}/evaluations/:evaluationId/stop`, options, async (request) => {
    const caller = await surface.caller(request);
    return ok(await evaluations.stop(caller, evaluationIdParam(request.params)));
  });

  // Progress as Server-Sent Events: `progress` when it moves (and every 15 s), then `done` with the whole
  // evaluation once it has ended, and the stream ends. It reads the row the running instance saves, so it
  // follows an evaluation that runs on any instance.
  app.get(`${prefix}/evaluations/:evaluationId/events`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const id = evaluationIdParam(request.params);
    // Refused before the stream opens: another project's evaluation is a 404.
    let state = await evaluations.progress(caller, id);
    const stream = openEventStream(request, reply);
    try {
      let sent = "";
      let sentAt = 0;
      while (!stream.signal.aborted) {
        if (state.status !== "running") {
          await stream.sink.send("done", await evaluations.get(caller, id));
          break;
        }
        const text = JSON.stringify(state);
        if (text !== sent || Date.now() - sentAt >= PROGRESS_HEARTBEAT_MS) {
          await stream.sink.send("progress", state);
          sent = text;
          sentAt = Date.now();
        }
        await new Promise((resolve) => setTimeout(resolve, PROGRESS_POLL_MS));
        state = await evaluations.progress(caller, id);
      }
    } catch (error) {
      request.log.error({ err: error }, "evaluation progress stream failed");
      await stream.sink.send("error", {
        code: "internal",
        message: `internal error; the server log has it under request id ${request.id}`,
      });
    } finally {
      stream.end();
    }
    return reply;
  });
}
