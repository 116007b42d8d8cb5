import { projectEvent, promptEvent } from "@promptstore/core/events";
import {
  createPromptBody,
  importPromptBody,
  listQuery,
  publishBody,
  readQuery,
  saveVersionBody,
} from "@promptstore/core/schemas";
import { z } from "zod";
import { DATASET_OPERATIONS, datasetFileOperations } from "../evaluations/dataset-operations.js";
import { EVALUATION_OPERATIONS, evaluationStreamOperations } from "../evaluations/evaluation-operations.js";
import { OUTCOME_OPERATIONS } from "../outcomes/outcome-operations.js";
import { AUDIT_OPERATIONS } from "../routes/audit-v2.js";
import { INCLUDE_OPERATIONS } from "../routes/includes-v2.js";
import { PLAN_OPERATIONS } from "../routes/plans-v2.js";
import { PLAYGROUND_OPERATIONS, playgroundStreamOperations } from "../routes/playground-operations.js";
import { RELEASE_OPERATIONS } from "../routes/releases-v2.js";
import { WEBHOOK_OPERATIONS } from "../routes/webhooks-v2.js";
import type { Operation } from "./operation.js";
import {
  createdPrompt,
  deletedPrompt,
  failureEnvelope,
  importedPrompt,
  promptList,
  promptView,
  publishedVersion,
  savedVersion,
  successEnvelope,
  versionList,
} from "./response-schemas.js";

const OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v2/prompts",
    operationId: "listPrompts",
    summary: "List the project's prompts, oldest first",
    query: listQuery,
    status: 200,
    response: promptList,
    errors: [400, 401, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts",
    operationId: "createPrompt",
    summary: "Create a prompt with its first version",
    body: createPromptBody,
    status: 201,
    response: createdPrompt,
    errors: [400, 401, 403, 409, 413, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}",
    operationId: "getPrompt",
    summary: "Read a prompt: production by default",
    query: readQuery,
    status: 200,
    response: promptView,
    errors: [400, 401, 404, 409, 429],
    conditional: true,
  },
  {
    method: "put",
    path: "/api/v2/prompts/{id}",
    operationId: "savePromptVersion",
    summary: "Save a new version (full content)",
    body: saveVersionBody,
    status: 200,
    response: savedVersion,
    errors: [400, 401, 403, 404, 413, 415, 429],
  },
  {
    method: "delete",
    path: "/api/v2/prompts/{id}",
    operationId: "deletePrompt",
    summary: "Delete a prompt with all its versions; its id becomes free",
    status: 200,
    response: deletedPrompt,
    errors: [401, 403, 404, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/publish",
    operationId: "publishPrompt",
    summary: "Point production, or another label, at a version (rollback: an older hash); with percent, a rollout",
    body: publishBody,
    status: 200,
    response: publishedVersion,
    errors: [400, 401, 403, 404, 409, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/versions",
    operationId: "listPromptVersions",
    summary: "List the prompt's versions, newest first",
    status: 200,
    response: versionList,
    errors: [401, 404, 429],
  },
  {
    method: "post",
    path: "/api/v2/import",
    operationId: "importPrompt",
    summary:
      "Import one prompt with versions from another instance or project: hashes, messages and times kept; idempotent",
    body: importPromptBody,
    status: 200,
    response: importedPrompt,
    errors: [400, 401, 403, 409, 413, 415, 429],
  },
];

const ETAG_HEADER = {
  description:
    'Only when `version` is a full 64-character hash: `"<hash>.g1"` (guard on) or `"<hash>.g0"`. The version never changes.',
  schema: { type: "string" },
};

/** Path parameters other than `{id}`, described once. */
const PATH_PARAMETERS: Record<string, string> = {
  label: "A label's name (docs/releases.md)",
  release: "A release request's id",
  exampleId: "A saved example's id (exa_…)",
  evaluationId: "An evaluation's id (ev_…)",
};

const jsonSchema = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" });

function operation(op: Operation): Record<string, unknown> {
  const parameters: unknown[] = [];
  for (const [, name] of op.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({
      name,
      in: "path",
      required: true,
      schema: { type: "string" },
      description: name === "id" ? (op.idDescription ?? "Prompt id (slug)") : PATH_PARAMETERS[name as string],
    });
  }
  for (const [name, schema] of Object.entries(op.query?.shape ?? {})) {
    parameters.push({ name, in: "query", required: false, schema: jsonSchema(schema as z.ZodType, "input") });
  }
  const content = { "application/json": { schema: jsonSchema(successEnvelope(op.response), "output") } };
  const responses: Record<string, unknown> = {
    [op.status]: {
      description: op.statusDescription ?? "Success",
      ...(op.conditional ? { headers: { ETag: ETAG_HEADER } } : {}),
      content,
    },
  };
  if (op.alsoStatus) responses[op.alsoStatus.status] = { description: op.alsoStatus.description, content };
  if (op.conditional) {
    parameters.push({
      name: "If-None-Match",
      in: "header",
      required: false,
      schema: { type: "string" },
      description: "An ETag from an earlier read of the same full hash and guard: answered 304 while it matches",
    });
    responses[304] = { description: "Not modified: the ETag matches; no body", headers: { ETag: ETAG_HEADER } };
  }
  for (const status of op.errors) {
    responses[status] = { $ref: `#/components/responses/Error${status}` };
  }
  return {
    operationId: op.operationId,
    summary: op.summary,
    security: [{ apiKey: [] }],
    parameters,
    ...(op.body
      ? {
          requestBody: {
            required: !op.bodyOptional && (op.method !== "post" || !op.path.endsWith("publish")),
            content: { "application/json": { schema: jsonSchema(op.body, "input") } },
          },
        }
      : {}),
    responses,
  };
}

/**
 * An event as streamed: a prompt's (with `include=read`, live ones may also carry the production read), or the
 * project's own (`label.requirement_changed`), told apart by `type`.
 */
function streamedEventSchema(): Record<string, unknown> {
  const { $schema, ...prompt } = jsonSchema(promptEvent, "output") as { properties: Record<string, unknown> } & {
    $schema?: string;
  };
  const { $schema: _, ...project } = jsonSchema(projectEvent, "output");
  return {
    $schema,
    oneOf: [
      {
        ...prompt,
        properties: {
          ...prompt.properties,
          read: {
            ...jsonSchema(promptView, "output"),
            description: "With include=read: the production read (guard on) this event leads to",
          },
        },
      },
      project,
    ],
  };
}

/** The change-event stream: not JSON but Server-Sent Events, described by hand (docs/events.md). */
function eventsOperation(): Record<string, unknown> {
  return {
    operationId: "streamEvents",
    summary: "Stream the project's change events (Server-Sent Events)",
    description:
      "Opens with `retry:`, then (after any replay) one `ready` event, or `reset` when events after " +
      "Last-Event-ID are no longer kept. Each change is an SSE event named by its type, with the event's id " +
      "and its JSON as data: a PromptEvent, or (label.requirement_changed, about the project and no prompt) a " +
      "ProjectEvent. A `: heartbeat` comment every 15 s. See docs/events.md.",
    security: [{ apiKey: [] }],
    parameters: [
      {
        name: "Last-Event-ID",
        in: "header",
        required: false,
        schema: { type: "string" },
        description: "The id of the last event received: the events after it are replayed first",
      },
      {
        name: "include",
        in: "query",
        required: false,
        schema: { type: "string", enum: ["read"] },
        description:
          "read: each live event (not a replayed one) also carries, as `read`, the production read (guard on) " +
          "it leads to, when the prompt still serves it; a client holding the prompt then needs no request",
      },
    ],
    responses: {
      200: {
        description:
          "The stream; every event's data is a PromptEvent, or a ProjectEvent for label.requirement_changed (ready and reset carry last_event_id)",
        content: { "text/event-stream": { schema: streamedEventSchema() } },
      },
      401: { $ref: "#/components/responses/Error401" },
      429: { $ref: "#/components/responses/Error429" },
    },
  };
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid body or query; the message names the field",
  401: "Missing or invalid API key",
  403: "The key's scope does not allow this (the message names the scope needed), the plan limit is reached, or the project's cap on webhook endpoints",
  404: "Prompt, version, webhook endpoint, dataset or evaluation not found in this project",
  409: "Version prefix matches several versions, the id or name is taken, or (datasets) the head moved since `base`",
  413: "Body larger than the body limit (PROMPTSTORE_MAX_BODY_BYTES, 4 MiB unless configured; an import: PROMPTSTORE_DATASET_MAX_IMPORT_BYTES)",
  415: "Content-Type is not application/json (an import: not JSONL or CSV)",
  429: "Rate limit exceeded, or (events) the organization's cap on open streams; see Retry-After",
  503: "Not taken now: the database is unreachable, or (outcomes) this server holds as many unwritten outcomes as it may; send again later",
};

/** The OpenAPI 3.1 document of v2, built from the schemas the routes validate with. */
export function buildOpenApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of [
    ...OPERATIONS,
    ...RELEASE_OPERATIONS,
    ...PLAN_OPERATIONS,
    ...INCLUDE_OPERATIONS,
    ...WEBHOOK_OPERATIONS,
    ...AUDIT_OPERATIONS,
    ...PLAYGROUND_OPERATIONS,
    ...DATASET_OPERATIONS,
    ...EVALUATION_OPERATIONS,
    ...OUTCOME_OPERATIONS,
  ]) {
    paths[op.path] = { ...paths[op.path], [op.method]: operation(op) };
  }
  paths["/api/v2/events"] = { get: eventsOperation() };
  Object.assign(
    paths,
    playgroundStreamOperations((schema) => jsonSchema(schema, "input")),
  );
  for (const [path, methods] of Object.entries({
    ...datasetFileOperations(
      (schema) => jsonSchema(schema, "input"),
      (schema) => jsonSchema(successEnvelope(schema), "output"),
    ),
    ...evaluationStreamOperations((schema) => jsonSchema(schema, "output")),
  })) {
    paths[path] = { ...paths[path], ...(methods as Record<string, unknown>) };
  }
  const errorSchema = jsonSchema(failureEnvelope, "output");
  return {
    openapi: "3.1.0",
    info: {
      title: "Promptstore API",
      version,
      license: { name: "MIT", identifier: "MIT" },
      description:
        "Versioned, content-addressed prompts. Every response is an envelope: { success, data } or { success: false, error }.",
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key" } },
      responses: Object.fromEntries(
        Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [
          `Error${status}`,
          { description, content: { "application/json": { schema: errorSchema } } },
        ]),
      ),
    },
    paths,
  };
}
