import { updateDependentsBody, updateIncludesBody, versionRef } from "@promptstore/core/schemas";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import { callerOf } from "../guards/auth.js";
import type { Operation } from "../openapi/operation.js";
import { includeOut, releaseOut } from "../openapi/response-schemas.js";
import { parseInput } from "../validate.js";
import { promptIdParam } from "./params.js";

const hash = z.string().describe("A full version hash");

export const includesQuery = z.object({
  version: versionRef.optional().describe("The version whose includes are listed: production unless given"),
});

const includesOut = z.strictObject({
  id: z.string(),
  version: hash.describe("The version read"),
  includes: z.array(
    includeOut.extend({
      current: hash.nullable().describe("What the pointer names now (a hash pointer: the pin); null when gone"),
      outdated: z.boolean().describe("The pointer names another version now: an update is available"),
    }),
  ),
});

const includedByOut = z.strictObject({
  id: z.string(),
  included_by: z.array(
    z.strictObject({
      prompt: z.string().describe("The including prompt"),
      version: hash.describe("Its version that pins this prompt"),
      labels: z.array(z.string()).describe("What serves that version: production, latest, labels"),
      include: z.string().describe("The include as written"),
      pointer: z.string().describe("What it follows"),
      pinned: hash.describe("The version of this prompt it took"),
      current: hash.nullable().describe("What the pointer names now; null when its label is gone"),
      outdated: z.boolean(),
      saved_at: z.string().describe("When the including version was saved"),
    }),
  ),
  truncated: z.boolean().describe("More pins exist than the 1000 answered"),
});

const includesUpdateOut = z.strictObject({
  id: z.string(),
  from_version: hash.describe("The version the update started from"),
  version: hash.describe("The version with the new pins (from_version when nothing moved)"),
  created: z.boolean(),
  updated: z.array(z.strictObject({ include: z.string(), from: hash, to: hash })).describe("Each pin moved"),
  outcome: z
    .enum(["saved", "published", "release_requested", "blocked"])
    .describe(
      "saved; published (the label moved, or served it already); release_requested (protected label); blocked (its required evaluation has not passed: see reason)",
    ),
  label: z.string().nullable().describe("The label published, when publishing was asked"),
  release: releaseOut.optional().describe("The release request made for a protected label"),
  reason: z.string().optional().describe("Why the label did not move, and how to run its required evaluation"),
});

const dependentsUpdateOut = z.strictObject({
  id: z.string(),
  results: z.array(
    z.union([
      includesUpdateOut,
      z.strictObject({ id: z.string(), error: z.string(), status: z.number().int().describe("The refusal's status") }),
    ]),
  ),
});

export const INCLUDE_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v2/prompts/{id}/includes",
    operationId: "listPromptIncludes",
    summary: "What a version of the prompt includes, with its pins and what their pointers name now",
    query: includesQuery,
    status: 200,
    response: includesOut,
    errors: [400, 401, 404, 409, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/included-by",
    operationId: "listPromptIncludedBy",
    summary: "The versions of other prompts that include this one, what serves them, and whether their pins are behind",
    status: 200,
    response: includedByOut,
    errors: [401, 404, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/update-includes",
    operationId: "updatePromptIncludes",
    summary:
      "Save the prompt again with its includes pinned to what they name now; publish where allowed if asked (protected: a release request)",
    body: updateIncludesBody,
    bodyOptional: true,
    status: 200,
    response: includesUpdateOut,
    errors: [400, 401, 403, 404, 409, 415, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/included-by/update",
    operationId: "updatePromptDependents",
    summary: "Update the includes of this prompt in chosen prompts that include it (each as update-includes)",
    body: updateDependentsBody,
    bodyOptional: true,
    status: 200,
    response: dependentsUpdateOut,
    errors: [400, 401, 403, 404, 415, 429],
  },
];

/** Includes over the API (docs/includes.md): both ends of the graph, and updates of pins on purpose. */
export function registerIncludeRoutes(app: FastifyInstance, prompts: PromptService): void {
  const auth = { config: { auth: true } };

  app.get("/api/v2/prompts/:id/includes", auth, async (request) => {
    const id = promptIdParam(request.params);
    const query = parseInput(includesQuery, request.query, "query");
    return ok(await prompts.includes.includes(callerOf(request), id, query.version));
  });

  app.get("/api/v2/prompts/:id/included-by", auth, async (request) => {
    return ok(await prompts.includes.includedBy(callerOf(request), promptIdParam(request.params)));
  });

  app.post("/api/v2/prompts/:id/update-includes", auth, async (request) => {
    const id = promptIdParam(request.params);
    const body = parseInput(updateIncludesBody, request.body ?? {}, "body");
    return ok(await prompts.includes.update(callerOf(request), id, body));
  });

  app.post("/api/v2/prompts/:id/included-by/update", auth, async (request) => {
    const id = promptIdParam(request.params);
    const body = parseInput(updateDependentsBody, request.body ?? {}, "body");
    return ok(await prompts.includes.updateDependents(callerOf(request), id, body));
  });
}
