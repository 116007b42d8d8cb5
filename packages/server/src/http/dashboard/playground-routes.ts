import { createConnectionBody, updateConnectionBody } from "@promptstore/core/playground";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { ConnectionService } from "../../service/playground/connection-service.js";
import type { ExampleService } from "../../service/playground/example-service.js";
import type { RunService } from "../../service/playground/run-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { countRequest } from "../guards/rate-limit.js";
import { storableIdParam } from "../routes/params.js";
import { registerPlaygroundEndpoints } from "../routes/playground.js";
import { parseInput } from "../validate.js";
import { projectIdParam } from "./prompt-routes.js";
import { userOf } from "./session-auth.js";

const PREFIX = "/api/dashboard/projects/:projectId";

export interface DashboardPlaygroundDeps {
  accounts: AccountService;
  prompts: PromptService;
  connections: ConnectionService;
  runs: RunService;
  examples: ExampleService;
  limiter: RateLimiter;
}

/**
 * The playground in the dashboard: connections (owners manage, members list), runs and examples through a
 * session, and a release request's answer with the examples' results added. A member is let through
 * here; the services decide what the role may do.
 */
export function registerDashboardPlaygroundRoutes(app: FastifyInstance, deps: DashboardPlaygroundDeps): void {
  const { accounts, prompts, connections, examples } = deps;
  const session = { config: { session: true } };
  const caller = (request: FastifyRequest) => accounts.projectCaller(userOf(request), projectIdParam(request), "read");
  const connectionIdParam = (request: FastifyRequest) =>
    String((request.params as { connectionId?: string }).connectionId ?? "");

  app.get(`${PREFIX}/connections`, session, async (request) => {
    return ok({ connections: await connections.list(await caller(request)) });
  });

  app.post(`${PREFIX}/connections`, session, async (request, reply) => {
    const granted = await caller(request);
    const body = parseInput(createConnectionBody, request.body, "body");
    reply.code(201);
    return ok(await connections.create(granted, body));
  });

  app.patch(`${PREFIX}/connections/:connectionId`, session, async (request) => {
    const granted = await caller(request);
    const body = parseInput(updateConnectionBody, request.body, "body");
    return ok(await connections.update(granted, connectionIdParam(request), body));
  });

  app.delete(`${PREFIX}/connections/:connectionId`, session, async (request) => {
    return ok(await connections.remove(await caller(request), connectionIdParam(request)));
  });

  registerPlaygroundEndpoints(
    app,
    PREFIX,
    {
      config: { session: true },
      caller,
      // Sessions are not counted by the key guard; a run is, like any API request of the organization.
      async countRun(request, reply, granted) {
        request.caller = granted;
        await countRequest(request, reply, deps.limiter);
      },
    },
    deps,
  );

  // One release request, with the candidate's and production's answers to the saved examples.
  app.get(`${PREFIX}/releases/:release`, session, async (request) => {
    const granted = await caller(request);
    const release = await prompts.getRelease(granted, storableIdParam(request.params, "release", "release"));
    return ok({ ...release, examples: await examples.forRelease(granted, release) });
  });
}
