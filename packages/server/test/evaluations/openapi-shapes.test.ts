/**
 * The OpenAPI document's shapes of datasets and evaluations hold what the server sends: every answer of
 * those routes, on both databases, parsed with the strict response schemas the document is built from.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { z } from "zod";
import { DATASET_OPERATIONS } from "../../src/http/evaluations/dataset-operations.js";
import { EVALUATION_OPERATIONS, evaluationOut, progressOut } from "../../src/http/evaluations/evaluation-operations.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, ended, twoVersions } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents, standInConnection } from "../support/playground.js";

const OPERATIONS = [...DATASET_OPERATIONS, ...EVALUATION_OPERATIONS];

/** The schema the document declares for an operation's answer. */
function responseOf(operationId: string): z.ZodType {
  const op = OPERATIONS.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId}`);
  return op.response;
}

/** Parses `data` with the declared schema; a field the schema lacks (or a wrong type) fails with its path. */
function holds(operationId: string, data: unknown): void {
  const parsed = responseOf(operationId).safeParse(data);
  expect(parsed.success ? "" : JSON.stringify(parsed.error.issues), operationId).toBe("");
}

const CASES = [
  { vars: { customer: "Ada" }, expected: "<ROLE>\nYOU HELP ADA.\n</ROLE>", tags: ["vip", "a"] },
  { vars: { customer: "Bob" }, messages: [{ role: "user", content: "Hi" }] },
];

describe.each(DATABASES)("datasets and evaluations answer what the OpenAPI document says ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    capitals(standIn);
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("every dataset route", async () => {
    const created = await t.request("POST", "/api/v2/datasets", {
      body: { name: "Shapes", description: "d", cases: CASES },
    });
    expect(created.status).toBe(201);
    holds("createDataset", created.body.data);
    const id = created.body.data.id;
    holds("listDatasets", (await t.request("GET", "/api/v2/datasets")).body.data);
    holds("getDataset", (await t.request("GET", `/api/v2/datasets/${id}`)).body.data);
    holds("listDatasetCases", (await t.request("GET", `/api/v2/datasets/${id}/cases?limit=1`)).body.data);
    const appended = await t.request("POST", `/api/v2/datasets/${id}/cases`, { body: { cases: [{}] } });
    holds("appendDatasetCases", appended.body.data);
    holds(
      "replaceDatasetCases",
      (await t.request("PUT", `/api/v2/datasets/${id}`, { body: { cases: CASES } })).body.data,
    );
    holds("listDatasetVersions", (await t.request("GET", `/api/v2/datasets/${id}/versions`)).body.data);
    holds(
      "getDataset",
      (await t.request("GET", `/api/v2/datasets/${id}?version=${appended.body.data.version}`)).body.data,
    );
    holds(
      "updateDataset",
      (await t.request("PATCH", `/api/v2/datasets/${id}`, { body: { description: null } })).body.data,
    );

    const prompt = await t.request("POST", "/api/v2/prompts", {
      body: { id: "ex", name: "Ex", sections: [{ title: "Role", content: "Hi {{ who }}" }] },
    });
    expect(prompt.status).toBe(201);
    await t.request("POST", "/api/v2/prompts/ex/examples", { body: { name: "one", variables: { who: "Ada" } } });
    const fromExamples = await t.request("POST", "/api/v2/datasets", { body: { name: "From", from_examples: "ex" } });
    expect(fromExamples.body.data.examples).toBe(1);
    holds("createDataset", fromExamples.body.data);
    holds("deleteDataset", (await t.request("DELETE", `/api/v2/datasets/${id}`)).body.data);
  });

  it("every evaluation route, the progress stream's events included", async () => {
    standIn.on("slow", {
      kind: "compute",
      answer: (body: Record<string, any>) => ({ content: String(body.messages[0].content).toUpperCase() }),
      firstDelayMs: 150,
    });
    const connection = await standInConnection(t, standIn);
    await twoVersions(t);
    const dataset = (await t.request("POST", "/api/v2/datasets", { body: { name: "Shapes", cases: CASES } })).body.data;
    const body = {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: [{ type: "expected" }, { type: "contains", value: "YOU", name: "says you" }],
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 1,
    };
    const started = await t.request("POST", "/api/v2/prompts/support/evaluations", { body });
    expect(started.status).toBe(202);
    holds("startEvaluation", started.body.data);
    const id = started.body.data.id;

    // The stream follows it to its end: progress events, then done with the whole evaluation.
    const stream = await t.request("GET", `/api/v2/evaluations/${id}/events`);
    expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/);
    const events = parseEvents(stream.body);
    expect(events.at(-1)?.event).toBe("done");
    expect(events.filter((e) => e.event === "progress").length).toBeGreaterThan(0);
    for (const e of events) {
      const parsed = (e.event === "done" ? evaluationOut : progressOut).safeParse(e.data);
      expect(parsed.success ? "" : JSON.stringify(parsed.error.issues), e.event).toBe("");
    }

    const view = await ended(t, id);
    expect(view.status).toBe("done");
    holds("getEvaluation", view);
    holds("listEvaluationCases", (await t.request("GET", `/api/v2/evaluations/${id}/cases?only=regression`)).body.data);
    holds("listEvaluations", (await t.request("GET", "/api/v2/prompts/support/evaluations")).body.data);
    holds("stopEvaluation", (await t.request("POST", `/api/v2/evaluations/${id}/stop`)).body.data);

    const reused = await t.request("POST", "/api/v2/prompts/support/evaluations", { body });
    expect(reused.status).toBe(200);
    expect(reused.body.data.reused).toBe(true);
    holds("startEvaluation", reused.body.data);
  });
});
