import { updateDependentsBody, updateIncludesBody } from "@promptstore/core/schemas";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { includesQuery } from "../routes/includes-v2.js";
import { promptIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";
import { projectIdParam } from "./prompt-routes.js";
import { userOf } from "./session-auth.js";

const PREFIX = "/api/dashboard/projects/:projectId/prompts/:id";

/**
 * Includes through a session (docs/includes.md): both ends of the graph and updates of pins, the same
 * service, schemas and answers as `/api/v2`. A member is let through here; the service decides what the role
 * may do (reading: any member; saving and publishing: editors and owners).
 */
export function registerDashboardIncludeRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  prompts: PromptService,
): void {
  const session = { config: { session: true } };
  const caller = (request: FastifyRequest) => accounts.projectCaller(userOf(request), projectIdParam(request), "read");

  app.get(`${PREFIX}/includes`, session, async (request) => {
    const query = parseInput(includesQuery, request.query, "query");
    const granted = await caller(request);
    return ok(await prompts.includes.includes(granted, promptIdParam(request.params), query.version));
  });

  app.get(`${PREFIX}/included-by`, session, async (request) => {
    const granted = await caller(request);
    return ok(await prompts.includes.includedBy(granted, promptIdParam(request.params)));
  });

  app.post(`${PREFIX}/update-includes`, session, async (request) => {
    const body = parseInput(updateIncludesBody, request.body ?? {}, "body");
    const granted = await caller(request);
    return ok(await prompts.includes.update(granted, promptIdParam(request.params), body));
  });

  app.post(`${PREFIX}/included-by/update`, session, async (request) => {
    const body = parseInput(updateDependentsBody, request.body ?? {}, "body");
    const granted = await caller(request);
    return ok(await prompts.includes.updateDependents(granted, promptIdParam(request.params), body));
  });
}
