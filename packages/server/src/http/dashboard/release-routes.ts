import { labelSettingsWithRequirement } from "@promptstore/core/evaluations/requirements";
import { releaseDecisionBody, releaseRequestBody, releasesQuery } from "@promptstore/core/schemas";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { labelParam, promptIdParam, storableIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";
import { projectIdParam } from "./prompt-routes.js";
import { userOf } from "./session-auth.js";

const PREFIX = "/api/dashboard/projects/:projectId";

/**
 * The release screens' API: requests (editors ask), decisions (owners decide, never their own request) and
 * label settings (owners). Every rule is the service's; a route only finds the caller.
 */
export function registerDashboardReleaseRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  prompts: PromptService,
): void {
  const session = { config: { session: true } };
  const caller = (request: FastifyRequest) => accounts.projectCaller(userOf(request), projectIdParam(request), "read");
  const releaseId = (request: FastifyRequest) => storableIdParam(request.params, "release", "release");

  app.get(`${PREFIX}/releases`, session, async (request) => {
    const query = parseInput(releasesQuery, request.query, "query");
    return ok(await prompts.listReleases(await caller(request), query));
  });

  app.post(`${PREFIX}/prompts/:id/releases`, session, async (request, reply) => {
    const body = parseInput(releaseRequestBody, request.body, "body");
    const granted = await caller(request);
    reply.code(201);
    return ok(await prompts.requestRelease(granted, promptIdParam(request.params), body));
  });

  for (const decision of ["approve", "reject"] as const) {
    app.post(`${PREFIX}/releases/:release/${decision}`, session, async (request) => {
      const body = parseInput(releaseDecisionBody, request.body ?? {}, "body");
      const granted = await caller(request);
      return ok(
        await prompts.decideRelease(granted, releaseId(request), {
          approve: decision === "approve",
          comment: body.comment,
        }),
      );
    });
  }

  app.get(`${PREFIX}/labels`, session, async (request) => ok(await prompts.labelSettings(await caller(request))));

  app.put(`${PREFIX}/labels/:label`, session, async (request) => {
    const body = parseInput(labelSettingsWithRequirement, request.body, "body");
    const granted = await caller(request);
    return ok(await prompts.configureLabel(granted, labelParam(request.params), body));
  });
}
