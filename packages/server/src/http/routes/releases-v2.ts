import { notFound } from "@promptstore/core/errors";
import { requirementBody } from "@promptstore/core/evaluations/requirements";
import { releaseRequestBody, releasesQuery } from "@promptstore/core/schemas";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ExampleService } from "../../service/playground/example-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { callerOf } from "../guards/auth.js";
import type { Operation } from "../openapi/operation.js";
import { releaseList, releaseOut, removedLabel } from "../openapi/response-schemas.js";
import { parseInput } from "../validate.js";
import { labelParam, promptIdParam, storableIdParam } from "./params.js";

/** A label's settings as every surface shows them. */
const labelSettingOut = z.strictObject({
  name: z.string(),
  description: z.string(),
  protected: z.boolean().describe("Moves only through an approved release request"),
  fallback: z.string().nullable().describe("Served to prompts that lack this label"),
  updated_at: z.string().describe("When the settings last changed; empty for a label never configured"),
  in_use: z.number().int().describe("How many prompts carry it (production: how many are published)"),
  required_evaluation: requirementBody
    .nullable()
    .describe("What a version must pass before this label points to it (docs/evaluations.md)"),
  rollback_allowed: z.boolean().describe("A rollback to a version the label served before passes its requirement"),
});

export const RELEASE_OPERATIONS: Operation[] = [
  {
    method: "delete",
    path: "/api/v2/prompts/{id}/labels/{label}",
    operationId: "removePromptLabel",
    summary: "Remove a label (not production) from a prompt; a protected one is refused (publish key)",
    status: 200,
    response: removedLabel,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/releases",
    operationId: "requestRelease",
    summary: "Ask for a (protected) label to move to a version, or to roll it out; approved in the dashboard",
    body: releaseRequestBody,
    status: 201,
    response: releaseOut,
    errors: [400, 401, 403, 404, 409, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/releases",
    operationId: "listReleases",
    summary: "The project's release requests, newest first",
    query: releasesQuery,
    status: 200,
    response: releaseList,
    errors: [400, 401, 429],
  },
  {
    method: "get",
    path: "/api/v2/labels",
    operationId: "listLabels",
    summary: "The project's label settings: protection, fallback, required evaluation (set by owners in the dashboard)",
    status: 200,
    response: z.strictObject({ labels: z.array(labelSettingOut) }),
    errors: [401, 429],
  },
  {
    method: "get",
    path: "/api/v2/labels/{label}",
    operationId: "getLabel",
    summary: "One label's settings",
    status: 200,
    response: labelSettingOut,
    errors: [400, 401, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/releases/{release}",
    operationId: "getRelease",
    summary: "One release request",
    status: 200,
    response: releaseOut,
    errors: [401, 404, 429],
  },
];

/**
 * Release requests over the API (docs/releases.md): a key may ask for a protected label to move and see
 * the requests; deciding them is the dashboard's, a person's (never a key's).
 */
export function registerReleaseRoutes(app: FastifyInstance, prompts: PromptService, examples?: ExampleService): void {
  const auth = { config: { auth: true } };

  app.post("/api/v2/prompts/:id/releases", auth, async (request, reply) => {
    const id = promptIdParam(request.params);
    const body = parseInput(releaseRequestBody, request.body, "body");
    reply.code(201);
    return ok(await prompts.requestRelease(callerOf(request), id, body));
  });

  app.get("/api/v2/releases", auth, async (request) => {
    const query = parseInput(releasesQuery, request.query, "query");
    return ok(await prompts.listReleases(callerOf(request), query));
  });

  // Label settings, read with any key (docs/releases.md; a required evaluation: docs/evaluations.md). Changing
  // them is an owner's, in the dashboard or the operator's CLI.
  app.get("/api/v2/labels", auth, async (request) => ok(await prompts.labelSettings(callerOf(request))));

  app.get("/api/v2/labels/:label", auth, async (request) => {
    const name = labelParam(request.params);
    const { labels } = await prompts.labelSettings(callerOf(request));
    const found = labels.find((l) => l.name === name);
    if (!found) throw notFound(`label ${name} not found`);
    return ok(found);
  });

  app.get("/api/v2/releases/:release", auth, async (request) => {
    const caller = callerOf(request);
    const release = await prompts.getRelease(caller, storableIdParam(request.params, "release", "release"));
    if (!examples) return ok(release);
    // Additive: the candidate's and production's kept answers to the prompt's saved examples (docs/playground.md).
    return ok({ ...release, examples: await examples.forRelease(caller, release) });
  });
}
