import {
  createExampleBody,
  exportedExample,
  exportedResult,
  importExamplesBody,
  resultsQuery,
  runAllBody,
  runBody,
  updateExampleBody,
} from "@promptstore/core/playground";
import { z } from "zod";
import type { Operation } from "../openapi/operation.js";

const exampleOut = exportedExample.extend({ prompt_id: z.string().describe("The prompt the example belongs to") });

const resultOut = exportedResult.extend({
  imported: z.boolean().describe("True when this server did not run it: it came in through an import"),
});

/** The playground's JSON operations in the OpenAPI document (docs/playground.md). */
export const PLAYGROUND_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v2/prompts/{id}/examples",
    operationId: "listExamples",
    summary: "The prompt's saved examples, oldest first",
    status: 200,
    response: z.strictObject({ examples: z.array(exampleOut) }),
    errors: [401, 403, 404, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/examples",
    operationId: "createExample",
    summary: "Save an example: name, variable values, messages, a note of a good answer (write)",
    body: createExampleBody,
    status: 201,
    response: exampleOut,
    errors: [400, 401, 403, 404, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/examples/{exampleId}",
    operationId: "getExample",
    summary: "One saved example",
    status: 200,
    response: exampleOut,
    errors: [401, 403, 404, 429],
  },
  {
    method: "patch",
    path: "/api/v2/prompts/{id}/examples/{exampleId}",
    operationId: "updateExample",
    summary: "Change an example; new variables or messages drop its kept results (write)",
    body: updateExampleBody,
    status: 200,
    response: exampleOut,
    errors: [400, 401, 403, 404, 415, 429],
  },
  {
    method: "delete",
    path: "/api/v2/prompts/{id}/examples/{exampleId}",
    operationId: "deleteExample",
    summary: "Remove an example and its kept results (write)",
    status: 200,
    response: z.strictObject({ id: z.string(), removed: z.literal(true) }),
    errors: [401, 403, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/examples/results",
    operationId: "listExampleResults",
    summary: "Every kept result of one version (a reference as reads take it), newest first",
    query: resultsQuery,
    status: 200,
    response: z.strictObject({ version: z.string(), results: z.array(resultOut) }),
    errors: [400, 401, 403, 404, 409, 429],
  },
  {
    method: "post",
    path: "/api/v2/prompts/{id}/examples/import",
    operationId: "importExamples",
    summary: "Add exported examples and results (ids kept; results kept where none is for their key) (write)",
    body: importExamplesBody,
    status: 200,
    response: z.strictObject({ examples: z.number().int(), results: z.number().int() }),
    errors: [400, 401, 403, 404, 415, 429],
  },
];

/** The two streamed operations, described by hand: their answer is Server-Sent Events, not an envelope. */
export function playgroundStreamOperations(jsonSchema: (schema: z.ZodType) => unknown): Record<string, unknown> {
  const streamed = (operationId: string, summary: string, body: z.ZodType, description: string) => ({
    post: {
      operationId,
      summary,
      description,
      security: [{ apiKey: [] }],
      parameters: [
        { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Prompt id (slug)" },
      ],
      requestBody: { required: true, content: { "application/json": { schema: jsonSchema(body) } } },
      responses: {
        200: {
          description: "Server-Sent Events; see docs/playground.md",
          content: { "text/event-stream": { schema: { type: "string" } } },
        },
        ...Object.fromEntries(
          [400, 401, 403, 404, 409, 415, 429].map((s) => [s, { $ref: `#/components/responses/Error${s}` }]),
        ),
      },
    },
  });
  return {
    "/api/v2/prompts/{id}/run": streamed(
      "runPrompt",
      "Run a version or a draft against a model connection, streamed (write)",
      runBody,
      "Events: start, delta (answer text), tool_call (pieces of a tool call), then done (message, finish_reason, usage, timing) or error (code, message, status). Messages: user, assistant (with tool_calls), tool.",
    ),
    "/api/v2/prompts/{id}/examples/run": streamed(
      "runExamples",
      "Run saved examples against one or two versions side by side, streamed; kept results come back without running again (write)",
      runAllBody,
      "Events: start, result (example_id, version, kept, result), error (one cell), done (ran, kept, failed).",
    ),
  };
}
