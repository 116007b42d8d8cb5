/**
 * Evaluations in the OpenAPI document (docs/evaluations.md): the JSON operations, declared as the routes
 * answer them, and the progress stream described by hand. The response schemas are strict: the tests parse
 * real answers with them, so the document cannot drift from what the server sends.
 */
import { check } from "@promptstore/core/evaluations/checks";
import {
  CASE_CLASSES,
  casesQuery,
  EVALUATION_ID,
  EVALUATION_STATUSES,
  evaluationDefaultsBody,
  startEvaluationBody,
} from "@promptstore/core/evaluations/evaluations";
import { chatMessage, draftContent, exportedResult } from "@promptstore/core/playground";
import { modelSettings } from "@promptstore/core/run-settings";
import { versionRef } from "@promptstore/core/schemas";
import { FULL_HASH } from "@promptstore/core/version-ref";
import { z } from "zod";
import type { Operation } from "../openapi/operation.js";

const hash = z.string().regex(FULL_HASH);
const timestamp = z.iso.datetime().describe("ISO 8601, UTC, milliseconds");
const count = z.number().int().min(0);

/** A check as the evaluation keeps it: a judge pinned to its prompt's hash and model, a webhook to its URL. */
const pinnedCheck = z.discriminatedUnion(
  "type",
  check.options.map((option) => {
    const type = (option.shape as { type: z.ZodLiteral<string> }).type.value;
    if (type === "judge") {
      return (option as z.ZodObject).extend({
        version: hash.describe("The judge prompt's version, pinned when the evaluation started"),
        model: z.string().describe("The model the judge runs on"),
      });
    }
    if (type === "webhook") {
      return (option as z.ZodObject).extend({
        url: z.string().describe("The endpoint's URL when the evaluation started"),
      });
    }
    return option;
  }) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

export const versionSummaryOut = z.strictObject({
  ref: z.string().describe("The version as it was named: a reference, or draft"),
  version: hash,
  draft: z.boolean(),
  model: modelSettings.partial().describe("The effective model settings: the version's, the request's model on top"),
  settings_hash: hash.describe("The run settings' hash (connection, guard, model): part of the content kept"),
  passed: count,
  failed: count,
  errored: count,
  pending: count.describe("Cases not judged (while running, or left by a stop)"),
  pass_rate: z.number().nullable().describe("passed / (passed + failed + errored); null before any case is judged"),
  scores: z
    .record(z.string(), z.number().nullable())
    .describe("Per check name, the mean score over the cases it judged; null when it judged none"),
  check_pass_rates: z
    .record(z.string(), z.number().nullable())
    .describe("Per check name, the share of judged cases (errored included) on which it passed; null before any"),
  tokens: z.strictObject({ input: count, output: count }),
  latency_ms: z.strictObject({ p50: z.number().nullable(), p95: z.number().nullable() }),
});

export const evaluationOut = z.strictObject({
  id: z.string().regex(EVALUATION_ID),
  prompt_id: z.string(),
  status: z.enum(EVALUATION_STATUSES),
  reused: z.boolean().describe("Every answer and verdict was already kept: nothing was sent to the provider"),
  reused_from: z.string().nullable().describe("The earlier evaluation of the same content, when reused"),
  dataset: z.strictObject({ id: z.string(), version: hash, cases: count }),
  checks_hash: hash,
  checks: z.array(pinnedCheck),
  check_names: z.array(z.string()),
  connection: z.string(),
  concurrency: z.number().int(),
  progress: z.strictObject({ done: count, total: count }),
  versions: z.array(versionSummaryOut),
  compare: z
    .strictObject({ regressions: count, improvements: count })
    .nullable()
    .describe("Against the first version (two versions or more)"),
  created_at: timestamp,
  created_by: z.string().nullable(),
  finished_at: timestamp.nullable(),
  reason: z.string().nullable().describe("Why it failed, when it did"),
  required_by: z.string().nullable().describe("Run for this label's required evaluation; null otherwise"),
});

const normalCaseOut = z.strictObject({
  vars: z.record(z.string(), z.string()),
  messages: z.array(chatMessage).optional(),
  expected: z.string().optional(),
  tags: z.array(z.string()).optional(),
});

const cellOut = z.strictObject({
  version: hash,
  state: z.enum(["passed", "failed", "errored", "pending"]),
  answer: exportedResult.shape.answer.nullable(),
  verdicts: z.array(
    z.strictObject({
      name: z.string(),
      pass: z.boolean().nullable().describe("null when the check could not decide (an error)"),
      score: z.number().nullable(),
      reason: z.string(),
    }),
  ),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  latency_ms: z.number().nullable(),
  tokens: z.strictObject({ input: count, output: count }).nullable(),
});

export const caseResultOut = z.strictObject({
  position: count,
  case_id: hash,
  case: normalCaseOut,
  class: z.enum(CASE_CLASSES).describe("How the case fares against the first version"),
  results: z.array(cellOut).describe("One per version, in the evaluation's order"),
});

export const casesPageOut = z.strictObject({
  items: z.array(caseResultOut),
  next: z.number().int().nullable().describe("The `after` of the next page; null on the last"),
});

/** The data of a `progress` event. */
export const progressOut = z.strictObject({
  status: z.enum(EVALUATION_STATUSES),
  progress: z.strictObject({ done: count, total: count }),
});

const evaluationWithCases = evaluationOut.extend({
  cases: casesPageOut.describe("The first page of cases (after, limit and only as for /cases)"),
});

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional().describe("At most this many, newest first (20)"),
});

const ID = "The prompt id (slug)";

/** A prompt's evaluation defaults. */
const defaultsOut = z.strictObject({
  prompt_id: z.string(),
  checks: z.array(check).nullable().describe("The default check set; null when none was saved"),
  dataset: z.string().nullable().describe("A dataset of the project; null when none (or it was deleted since)"),
  updated_at: timestamp.nullable(),
  updated_by: z.string().nullable(),
});

/** Where a version stands against a label's required evaluation. */
export const gateOut = z.strictObject({
  label: z.string(),
  version: z.string().describe("The reference asked about"),
  required: z.boolean().describe("Whether the label has a required evaluation; the rest is absent when not"),
  state: z.enum(["passed", "failed", "stale", "not_evaluated"]).optional(),
  reason: z.string().optional().describe("What is missing, in words"),
  evaluation: z.string().optional().describe("The evaluation the state rests on"),
  pass_rate: z.number().nullable().optional(),
  rollback: z.literal(true).optional().describe("Passed as a version the label served before"),
});

const requiredRunBody = z
  .strictObject({ version: versionRef.optional(), draft: draftContent.optional() })
  .describe("A version (a reference; latest when neither) or a draft, not both");

/** The evaluations' JSON operations in the OpenAPI document (docs/evaluations.md). */
export const EVALUATION_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/api/v2/prompts/{id}/evaluations",
    operationId: "startEvaluation",
    summary:
      "Evaluate one to four versions over a dataset with a check set (write): 202 when it started, 200 when every case was already judged (reused)",
    idDescription: ID,
    body: startEvaluationBody,
    status: 202,
    statusDescription: "Started: it runs on (status running)",
    alsoStatus: { status: 200, description: "Reused: done at once, nothing sent to the provider (reused: true)" },
    response: evaluationOut,
    errors: [400, 401, 403, 404, 409, 413, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/evaluations",
    operationId: "listEvaluations",
    summary: "The prompt's evaluations, newest first",
    idDescription: ID,
    query: listQuery,
    status: 200,
    response: z.strictObject({ evaluations: z.array(evaluationOut) }),
    errors: [400, 401, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/evaluations/{evaluationId}",
    operationId: "getEvaluation",
    summary: "An evaluation: status, progress, per version the counts, pass rate and scores, and a page of cases",
    query: casesQuery,
    status: 200,
    response: evaluationWithCases,
    errors: [400, 401, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/evaluations/{evaluationId}/cases",
    operationId: "listEvaluationCases",
    summary: "A page of the evaluation's cases, each with every version's answer and verdicts; only keeps one class",
    query: casesQuery,
    status: 200,
    response: casesPageOut,
    errors: [400, 401, 404, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/labels/{label}/evaluations",
    operationId: "runRequiredEvaluation",
    summary:
      "Run a label's required evaluation for a version or a draft (write): the evaluation its gate counts; 202 when it started, 200 when reused",
    idDescription: ID,
    body: requiredRunBody,
    status: 202,
    statusDescription: "Started: it runs on (status running)",
    alsoStatus: { status: 200, description: "Reused: done at once, nothing sent to the provider (reused: true)" },
    response: evaluationOut,
    errors: [400, 401, 403, 404, 409, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/evaluation-defaults",
    operationId: "getEvaluationDefaults",
    summary: "The prompt's default check set and dataset (checks null when none was saved)",
    idDescription: ID,
    status: 200,
    response: defaultsOut,
    errors: [401, 404, 429],
  },
  {
    method: "put",
    path: "/api/v2/prompts/{id}/evaluation-defaults",
    operationId: "saveEvaluationDefaults",
    summary: "Save the prompt's default check set and dataset (write)",
    idDescription: ID,
    body: evaluationDefaultsBody,
    status: 200,
    response: defaultsOut,
    errors: [400, 401, 403, 404, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/labels/{label}/gate",
    operationId: "getLabelGate",
    summary: "Where a version (latest by default) stands against a label's required evaluation",
    idDescription: ID,
    query: z.strictObject({ version: versionRef.optional() }),
    status: 200,
    response: gateOut,
    errors: [400, 401, 404, 409, 429],
  },
  {
    method: "post",
    path: "/api/v2/evaluations/{evaluationId}/stop",
    operationId: "stopEvaluation",
    summary: "Stop an evaluation wherever it runs; what was judged stays kept (write)",
    status: 200,
    response: evaluationOut,
    errors: [401, 403, 404, 429],
  },
];

/** The progress stream, described by hand: its answer is Server-Sent Events, not an envelope. */
export function evaluationStreamOperations(jsonSchema: (schema: z.ZodType) => unknown): Record<string, unknown> {
  return {
    "/api/v2/evaluations/{evaluationId}/events": {
      get: {
        operationId: "streamEvaluation",
        summary: "Follow an evaluation's progress (Server-Sent Events) until it ends",
        description:
          "Events: `progress` ({ status, progress: { done, total } }) when it moves and every 15 s, then `done` " +
          "with the whole evaluation (without cases), and the stream ends. An evaluation that has already " +
          "ended answers `done` at once. It follows an evaluation running on any instance. See docs/evaluations.md.",
        security: [{ apiKey: [] }],
        parameters: [
          {
            name: "evaluationId",
            in: "path",
            required: true,
            schema: { type: "string" },
            description: "An evaluation's id (ev_…)",
          },
        ],
        responses: {
          200: {
            description: "The stream: `progress` events, then one `done` event whose data is the evaluation",
            content: { "text/event-stream": { schema: jsonSchema(z.union([progressOut, evaluationOut])) } },
          },
          ...Object.fromEntries([401, 404, 429].map((s) => [s, { $ref: `#/components/responses/Error${s}` }])),
        },
      },
    },
  };
}
