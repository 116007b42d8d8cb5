import {
  createExampleBody,
  importExamplesBody,
  resultsQuery,
  runAllBody,
  runBody,
  updateExampleBody,
} from "@promptstore/core/playground";
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../../service/access.js";
import type { ExampleService } from "../../service/playground/example-service.js";
import type { RunService, RunSink } from "../../service/playground/run-service.js";
import { ok } from "../envelope.js";
import { type EventStream, openEventStream } from "../sse-stream.js";
import { parseInput } from "../validate.js";
import { promptIdParam } from "./params.js";

export interface PlaygroundDeps {
  runs: RunService;
  examples: ExampleService;
}

export interface PlaygroundSurface {
  /** The route's guard: `{ auth: true }` (an API key) or `{ session: true }` (the dashboard). */
  config: FastifyContextConfig;
  caller(request: FastifyRequest): Promise<Caller> | Caller;
  /** Counts a run against the organization's rate limit where the route's guard did not already. */
  countRun?(request: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<void>;
}

const exampleIdParam = (params: unknown): string => String((params as { exampleId?: string }).exampleId ?? "");

/**
 * Streams `work` as Server-Sent Events. A fault of ours after the stream started cannot be a 500 any more:
 * it is an `error` event, and the log has the rest under the request's id.
 */
async function streamed(
  request: FastifyRequest,
  reply: FastifyReply,
  work: (sink: RunSink, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const stream: EventStream = openEventStream(request, reply);
  try {
    await work(stream.sink, stream.signal);
  } catch (error) {
    request.log.error({ err: error }, "run failed");
    await stream.sink.send("error", {
      code: "internal",
      message: `internal error; the server log has it under request id ${request.id}`,
      status: null,
    });
  } finally {
    stream.end();
  }
}

/**
 * The playground's runs and examples (docs/playground.md) under `prefix`: `/api/v2` for keys, the
 * dashboard's project prefix for sessions. Same services, same schemas; the services decide permissions.
 */
export function registerPlaygroundEndpoints(
  app: FastifyInstance,
  prefix: string,
  surface: PlaygroundSurface,
  deps: PlaygroundDeps,
): void {
  const options = { config: surface.config };
  const { runs, examples } = deps;

  app.post(`${prefix}/prompts/:id/run`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(runBody, request.body, "body");
    const run = await runs.prepare(caller, id, body);
    await surface.countRun?.(request, reply, caller);
    await streamed(request, reply, (sink, signal) => runs.stream(run, sink, signal));
    return reply;
  });

  app.get(`${prefix}/prompts/:id/examples`, options, async (request) => {
    return ok(await examples.list(await surface.caller(request), promptIdParam(request.params)));
  });

  app.post(`${prefix}/prompts/:id/examples`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(createExampleBody, request.body, "body");
    reply.code(201);
    return ok(await examples.create(caller, id, body));
  });

  app.get(`${prefix}/prompts/:id/examples/results`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const query = parseInput(resultsQuery, request.query, "query");
    return ok(await examples.results(caller, id, query.version));
  });

  app.post(`${prefix}/prompts/:id/examples/run`, options, async (request, reply) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(runAllBody, request.body, "body");
    const prepared = await examples.prepareRunAll(caller, id, body);
    await surface.countRun?.(request, reply, caller);
    await streamed(request, reply, prepared.execute);
    return reply;
  });

  app.post(`${prefix}/prompts/:id/examples/import`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(importExamplesBody, request.body, "body");
    return ok(await examples.importAll(caller, id, body));
  });

  app.get(`${prefix}/prompts/:id/examples/:exampleId`, options, async (request) => {
    const caller = await surface.caller(request);
    return ok(await examples.get(caller, promptIdParam(request.params), exampleIdParam(request.params)));
  });

  app.patch(`${prefix}/prompts/:id/examples/:exampleId`, options, async (request) => {
    const caller = await surface.caller(request);
    const id = promptIdParam(request.params);
    const body = parseInput(updateExampleBody, request.body, "body");
    return ok(await examples.update(caller, id, exampleIdParam(request.params), body));
  });

  app.delete(`${prefix}/prompts/:id/examples/:exampleId`, options, async (request) => {
    const caller = await surface.caller(request);
    return ok(await examples.remove(caller, promptIdParam(request.params), exampleIdParam(request.params)));
  });
}
