import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe("OpenAPI document", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(DATABASES[0]!);
  });
  afterAll(async () => {
    await t.close();
  });

  it("is served without a key as OpenAPI 3.1 with every v2 operation", async () => {
    const res = await t.request("GET", "/api/v2/openapi.json", { key: null });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/api/v2/audit",
      "/api/v2/datasets",
      "/api/v2/datasets/import",
      "/api/v2/datasets/{id}",
      "/api/v2/datasets/{id}/cases",
      "/api/v2/datasets/{id}/export",
      "/api/v2/datasets/{id}/import",
      "/api/v2/datasets/{id}/versions",
      "/api/v2/evaluations/{evaluationId}",
      "/api/v2/evaluations/{evaluationId}/cases",
      "/api/v2/evaluations/{evaluationId}/events",
      "/api/v2/evaluations/{evaluationId}/stop",
      "/api/v2/events",
      "/api/v2/import",
      "/api/v2/labels",
      "/api/v2/labels/{label}",
      "/api/v2/outcomes",
      "/api/v2/prompts",
      "/api/v2/prompts/{id}",
      "/api/v2/prompts/{id}/evaluation-defaults",
      "/api/v2/prompts/{id}/evaluations",
      "/api/v2/prompts/{id}/examples",
      "/api/v2/prompts/{id}/examples/import",
      "/api/v2/prompts/{id}/examples/results",
      "/api/v2/prompts/{id}/examples/run",
      "/api/v2/prompts/{id}/examples/{exampleId}",
      "/api/v2/prompts/{id}/fleet",
      "/api/v2/prompts/{id}/included-by",
      "/api/v2/prompts/{id}/included-by/update",
      "/api/v2/prompts/{id}/includes",
      "/api/v2/prompts/{id}/labels/{label}",
      "/api/v2/prompts/{id}/labels/{label}/evaluations",
      "/api/v2/prompts/{id}/labels/{label}/gate",
      "/api/v2/prompts/{id}/labels/{label}/plan",
      "/api/v2/prompts/{id}/labels/{label}/plan/abort",
      "/api/v2/prompts/{id}/labels/{label}/plan/advance",
      "/api/v2/prompts/{id}/labels/{label}/plan/pause",
      "/api/v2/prompts/{id}/labels/{label}/plan/resume",
      "/api/v2/prompts/{id}/outcomes",
      "/api/v2/prompts/{id}/plans",
      "/api/v2/prompts/{id}/publish",
      "/api/v2/prompts/{id}/releases",
      "/api/v2/prompts/{id}/run",
      "/api/v2/prompts/{id}/update-includes",
      "/api/v2/prompts/{id}/versions",
      "/api/v2/releases",
      "/api/v2/releases/{release}",
      "/api/v2/webhooks",
      "/api/v2/webhooks/{id}",
      "/api/v2/webhooks/{id}/deliveries",
      "/api/v2/webhooks/{id}/rotate-secret",
    ]);
    expect(Object.keys(doc.paths["/api/v2/prompts"])).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/api/v2/prompts/{id}"])).toEqual(["get", "put", "delete"]);
    const stream = doc.paths["/api/v2/events"].get.responses["200"].content["text/event-stream"].schema;
    // A prompt's event, or the project's own (label.requirement_changed): told apart by `type`.
    expect(stream.oneOf).toHaveLength(2);
    const [events, projectEvents] = stream.oneOf;
    expect(projectEvents.required).toEqual(["id", "type", "at", "label", "requirement", "previous"]);
    expect(projectEvents.properties.type.enum).toEqual(["label.requirement_changed"]);
    expect(projectEvents.properties.requirement.required).toEqual(["hash", "rollback_allowed"]);
    expect(projectEvents.properties).not.toHaveProperty("prompt_id");
    expect(events.required).toEqual([
      "id",
      "type",
      "prompt_id",
      "version",
      "production_version",
      "latest_version",
      "at",
    ]);
    expect(events.properties.type.enum).toEqual([
      "prompt.created",
      "prompt.version_saved",
      "prompt.published",
      "prompt.deleted",
      "prompt.label_moved",
      "prompt.label_removed",
      "prompt.rollout_changed",
      "release.requested",
      "release.approved",
      "release.rejected",
      "evaluation.completed",
      "include.outdated",
      "rollout.advanced",
      "rollout.aborted",
      "rollout.completed",
    ]);
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: "apiKey", in: "header", name: "x-api-key" });
  });

  it("describes bodies from the same schemas the routes validate with, limits included", async () => {
    const doc = (await t.request("GET", "/api/v2/openapi.json", { key: null })).body;
    const create = doc.paths["/api/v2/prompts"].post.requestBody.content["application/json"].schema;
    expect(create.required).toEqual(["name"]);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.sections.maxItems).toBe(100);
    expect(create.properties.sections.items.properties.title.maxLength).toBe(1000);
    const read = doc.paths["/api/v2/prompts/{id}"].get;
    const version = read.parameters.find((p: { name: string }) => p.name === "version");
    expect(version.schema.pattern).toBe("^(production|latest|(?![0-9a-f]+$)[a-z][a-z0-9_-]{0,31}|[0-9a-f]{7,64})$");
    const ok = read.responses["200"].content["application/json"].schema;
    expect(ok.properties.data.required).toContain("production_version");
    expect(read.responses["404"]).toEqual({ $ref: "#/components/responses/Error404" });
    expect(read.responses["200"].headers.ETag.schema).toEqual({ type: "string" });
    expect(read.responses["304"].headers.ETag).toEqual({
      description:
        'Only when `version` is a full 64-character hash: `"<hash>.g1"` (guard on) or `"<hash>.g0"`. The version never changes.',
      schema: { type: "string" },
    });
    expect(read.parameters.find((p: { name: string }) => p.name === "If-None-Match").in).toBe("header");
    expect(doc.paths["/api/v2/prompts/{id}/versions"].get.responses).not.toHaveProperty("304");
  });

  it("describes the deletion: no body, { id, deleted: true }, 403 for a key without publish, 404 for an unknown prompt", async () => {
    const doc = (await t.request("GET", "/api/v2/openapi.json", { key: null })).body;
    const remove = doc.paths["/api/v2/prompts/{id}"].delete;
    expect(remove.requestBody).toBeUndefined();
    expect(remove.parameters.map((p: { name: string }) => p.name)).toEqual(["id"]);
    const data = remove.responses["200"].content["application/json"].schema.properties.data;
    expect(data.required).toEqual(["id", "deleted"]);
    expect(data.properties.deleted.const).toBe(true);
    expect(Object.keys(remove.responses).sort()).toEqual(["200", "401", "403", "404", "429"]);
  });
});
