/**
 * Outcomes and the fleet in the OpenAPI document (docs/outcomes.md), from the schemas the routes validate
 * with and strict answer schemas the tests parse real answers with.
 */
import { fleetView, outcomesAnswer, outcomesBody, outcomesQuery, outcomesView } from "@promptstore/core/outcomes";
import type { Operation } from "../openapi/operation.js";

const ID = "The prompt id (slug)";

export const OUTCOME_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/api/v2/outcomes",
    operationId: "reportOutcomes",
    summary:
      "Report how answers went (read key): up to 1000 outcomes a batch, each placed against its prompt, version and label or refused by name; and the sending instance's fleet report",
    body: outcomesBody,
    status: 200,
    response: outcomesAnswer,
    errors: [400, 401, 413, 415, 429, 503],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/outcomes",
    operationId: "getPromptOutcomes",
    summary:
      "A prompt's production numbers over time: per version (and label, and arm) the count, ok rate, mean score, latency p50/p95 and tokens",
    idDescription: ID,
    query: outcomesQuery,
    status: 200,
    response: outcomesView,
    errors: [400, 401, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/fleet",
    operationId: "getPromptFleet",
    summary: "What the running client instances serve of a prompt now: per label and version, how many instances",
    idDescription: ID,
    status: 200,
    response: fleetView,
    errors: [401, 404, 429],
  },
];
