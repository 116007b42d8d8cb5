/**
 * Datasets in the OpenAPI document (docs/evaluations.md, "Datasets"): the JSON operations, declared as the
 * routes answer them, and the file operations (imports of JSONL or CSV, the JSONL export) described by hand.
 * The response schemas are strict: the tests parse real answers with them.
 */
import {
  appendCasesBody,
  createDatasetBody,
  DATASET_ID,
  DATASET_IMPORT_TYPES,
  datasetCasesQuery,
  datasetCreateImportQuery,
  datasetExportQuery,
  datasetImportQuery,
  datasetReadQuery,
  replaceCasesBody,
  updateDatasetBody,
} from "@promptstore/core/evaluations/dataset-api";
import { chatMessage } from "@promptstore/core/playground";
import { FULL_HASH } from "@promptstore/core/version-ref";
import { z } from "zod";
import type { Operation } from "../openapi/operation.js";

const hash = z.string().regex(FULL_HASH);
const timestamp = z.iso.datetime().describe("ISO 8601, UTC, milliseconds");
const count = z.number().int().min(0);
const datasetId = z.string().regex(DATASET_ID);

export const datasetListItemOut = z.strictObject({
  id: datasetId,
  name: z.string(),
  description: z.string().nullable(),
  version: hash.describe("The head: the newest version"),
  cases: count.describe("Cases in the head"),
  created_at: timestamp,
  updated_at: timestamp,
});

export const datasetVersionOut = z.strictObject({
  version: hash.describe("SHA-256 of the canonical JSON array of its cases"),
  cases: count,
  parent: hash.nullable().describe("The version it was made from; null for the first"),
  message: z.string().nullable(),
  saved_at: timestamp,
  saved_by: z
    .string()
    .nullable()
    .describe("user:<e-mail> or key:<key prefix>; a read key sees user without the e-mail"),
});

export const datasetOut = datasetVersionOut.extend({
  id: datasetId,
  name: z.string(),
  description: z.string().nullable(),
  head: hash.describe("The newest version (the one read unless `version` was given)"),
  created_at: timestamp,
  updated_at: timestamp,
});

export const datasetCaseOut = z
  .strictObject({
    vars: z.record(z.string(), z.string()),
    messages: z.array(chatMessage).optional(),
    expected: z.string().optional(),
    tags: z.array(z.string()).optional().describe("Sorted, each once"),
  })
  .describe("A case as stored: vars always, the optional fields only when given");

export const datasetCasesOut = z.strictObject({
  id: datasetId,
  version: hash,
  cases: z.array(
    z.strictObject({
      position: count,
      id: hash.describe("SHA-256 of the case's canonical JSON: the same in every version holding it unchanged"),
      case: datasetCaseOut,
    }),
  ),
  next_after: z.number().int().nullable().describe("The `after` of the next page; null on the last"),
});

export const createdDatasetOut = z.strictObject({
  id: datasetId,
  name: z.string(),
  version: hash,
  cases: count,
  examples: count.optional().describe("With from_examples: how many saved examples the prompt had"),
});

export const savedDatasetOut = z.strictObject({
  id: datasetId,
  version: hash.describe("The head now"),
  created: z.boolean().describe("false when a version with exactly these cases existed: none was made"),
  cases: count,
});

const ID = "A dataset's id (ds_…)";
const JSON_ERRORS = [400, 401, 403, 404, 409, 413, 415, 429];

/** The datasets' JSON operations in the OpenAPI document. */
export const DATASET_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v2/datasets",
    operationId: "listDatasets",
    summary: "The project's datasets, each with its head version and case count",
    status: 200,
    response: z.strictObject({ datasets: z.array(datasetListItemOut) }),
    errors: [401, 429],
  },
  {
    method: "post",
    path: "/api/v2/datasets",
    operationId: "createDataset",
    summary: "Create a dataset with its first cases, or from a prompt's saved examples (write)",
    body: createDatasetBody,
    status: 201,
    response: createdDatasetOut,
    errors: JSON_ERRORS,
  },
  {
    method: "get",
    path: "/api/v2/datasets/{id}",
    operationId: "getDataset",
    summary: "A dataset at its head, or at a version by hash or unique prefix",
    idDescription: ID,
    query: datasetReadQuery,
    status: 200,
    response: datasetOut,
    errors: [400, 401, 404, 409, 429],
  },
  {
    method: "put",
    path: "/api/v2/datasets/{id}",
    operationId: "replaceDatasetCases",
    summary: "A new version holding exactly these cases; identical cases make none (write)",
    idDescription: ID,
    body: replaceCasesBody,
    status: 200,
    response: savedDatasetOut,
    errors: JSON_ERRORS,
  },
  {
    method: "patch",
    path: "/api/v2/datasets/{id}",
    operationId: "updateDataset",
    summary: "Rename or describe a dataset: not content, no version (write)",
    idDescription: ID,
    body: updateDatasetBody,
    status: 200,
    response: datasetListItemOut,
    errors: JSON_ERRORS,
  },
  {
    method: "delete",
    path: "/api/v2/datasets/{id}",
    operationId: "deleteDataset",
    summary: "Delete a dataset with every version and case (write)",
    idDescription: ID,
    status: 200,
    response: z.strictObject({ id: datasetId, deleted: z.literal(true) }),
    errors: [401, 403, 404, 409, 429],
  },
  {
    method: "get",
    path: "/api/v2/datasets/{id}/versions",
    operationId: "listDatasetVersions",
    summary: "A dataset's versions, newest first",
    idDescription: ID,
    status: 200,
    response: z.strictObject({ id: datasetId, head: hash, versions: z.array(datasetVersionOut) }),
    errors: [401, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/datasets/{id}/cases",
    operationId: "listDatasetCases",
    summary: "A page of a version's cases in order, after a position",
    idDescription: ID,
    query: datasetCasesQuery,
    status: 200,
    response: datasetCasesOut,
    errors: [400, 401, 404, 409, 429],
  },
  {
    method: "post",
    path: "/api/v2/datasets/{id}/cases",
    operationId: "appendDatasetCases",
    summary: "A new version: the head's cases, then these (how a dataset larger than one request is built) (write)",
    idDescription: ID,
    body: appendCasesBody,
    status: 200,
    response: savedDatasetOut,
    errors: JSON_ERRORS,
  },
];

/** The query parameters of a file operation, from the schema the route validates with. */
function queryParameters(schema: z.ZodObject, jsonSchema: (schema: z.ZodType) => unknown): unknown[] {
  return Object.entries(schema.shape).map(([name, field]) => ({
    name,
    in: "query",
    required: !(field as z.ZodType).safeParse(undefined).success,
    schema: jsonSchema(field as z.ZodType),
  }));
}

const idParameter = { name: "id", in: "path", required: true, schema: { type: "string" }, description: ID };

/** The file operations, described by hand: their bodies (imports) or answers (export) are JSONL or CSV. */
export function datasetFileOperations(
  jsonSchema: (schema: z.ZodType) => unknown,
  envelope: (schema: z.ZodType) => unknown,
): Record<string, unknown> {
  const errors = (statuses: number[]) =>
    Object.fromEntries(statuses.map((s) => [s, { $ref: `#/components/responses/Error${s}` }]));
  const fileBody = {
    required: true,
    description:
      "The file, read as it arrives: JSONL (one case a line) or CSV (a header; every column a variable but expected, tags and messages)",
    content: Object.fromEntries(DATASET_IMPORT_TYPES.map((type) => [type, { schema: { type: "string" } }])),
  };
  return {
    "/api/v2/datasets/import": {
      post: {
        operationId: "importDataset",
        summary: "Create a dataset whose first version is a JSONL or CSV file (write)",
        security: [{ apiKey: [] }],
        parameters: queryParameters(datasetCreateImportQuery, jsonSchema),
        requestBody: fileBody,
        responses: {
          201: {
            description: "Created",
            content: { "application/json": { schema: envelope(createdDatasetOut) } },
          },
          ...errors([400, 401, 403, 409, 413, 415, 429]),
        },
      },
    },
    "/api/v2/datasets/{id}/import": {
      post: {
        operationId: "importDatasetCases",
        summary: "A new version from a JSONL or CSV file: replacing the cases, or appended to the head's (write)",
        security: [{ apiKey: [] }],
        parameters: [idParameter, ...queryParameters(datasetImportQuery, jsonSchema)],
        requestBody: fileBody,
        responses: {
          200: { description: "Success", content: { "application/json": { schema: envelope(savedDatasetOut) } } },
          ...errors([400, 401, 403, 404, 409, 413, 415, 429]),
        },
      },
    },
    "/api/v2/datasets/{id}/export": {
      get: {
        operationId: "exportDataset",
        summary: "A version's cases as JSONL, one canonical case a line, streamed",
        security: [{ apiKey: [] }],
        parameters: [idParameter, ...queryParameters(datasetExportQuery, jsonSchema)],
        responses: {
          200: {
            description: "JSONL; X-Dataset-Version and X-Dataset-Cases name the version and its size",
            headers: {
              "X-Dataset-Version": { description: "The version exported", schema: { type: "string" } },
              "X-Dataset-Cases": { description: "How many cases (lines) it holds", schema: { type: "string" } },
            },
            content: { "application/x-ndjson": { schema: { type: "string" } } },
          },
          ...errors([400, 401, 404, 409, 429]),
        },
      },
    },
  };
}
