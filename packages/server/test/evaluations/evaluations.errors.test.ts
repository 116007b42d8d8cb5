/**
 * Starting an evaluation: every field refused before anything is sent, naming the field; scopes; another
 * project's evaluation is not found.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, startEvaluation, twoVersions } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";

describe.each(DATABASES)("evaluations: refusals ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    capitals(standIn);
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("refuses every bad field with a 400 naming it, and sends nothing", async () => {
    const connection = await standInConnection(t, standIn);
    await twoVersions(t);
    const dataset = await createDataset(t, "customers", [{ vars: { customer: "Ada" } }]);
    const good = {
      versions: ["production"],
      dataset: dataset.id,
      checks: [{ type: "contains", value: "YOU" }],
      connection,
      model: { name: "caps" },
    };
    const cases: [string, unknown, number, string][] = [
      ["no versions", { ...good, versions: [] }, 400, "versions: must name one to 4 versions"],
      ["five versions", { ...good, versions: ["a", "b", "c", "d", "e"] }, 400, "versions: must name one to 4 versions"],
      [
        "a version of no kind",
        { ...good, versions: [42] },
        400,
        "versions[0]: must be a version reference (a hash, a prefix, latest or a label) or { draft }",
      ],
      [
        "an unknown version",
        { ...good, versions: ["production", "0badc0de"] },
        404,
        "versions[1]: no version of prompt support matches 0badc0de",
      ],
      [
        "an unknown label",
        { ...good, versions: ["staging"] },
        400,
        "versions[0]: must be production, latest, a label this project uses",
      ],
      [
        "the same version twice",
        { ...good, versions: ["production", "production"] },
        400,
        "versions[1]: is the same version as versions[0]",
      ],
      ["no dataset", { ...good, dataset: undefined }, 400, "dataset: required"],
      [
        "a dataset that is no id",
        { ...good, dataset: "customers" },
        400,
        "dataset: must be a dataset id (ds_…), optionally with @<version>",
      ],
      ["an unknown dataset", { ...good, dataset: "ds_000000000000000000000000" }, 404, "dataset:"],
      ["an unknown dataset version", { ...good, dataset: `${dataset.id}@0000000` }, 404, "dataset:"],
      ["no checks", { ...good, checks: [] }, 400, "checks: must hold at least one check"],
      [
        "a check of no type",
        { ...good, checks: [{ type: "vibes" }] },
        400,
        "checks[0].type: must have a type: equals, contains, not_contains, regex, json, json_schema, tool_call, max_chars, expected, judge, webhook",
      ],
      ["a check without its value", { ...good, checks: [{ type: "contains" }] }, 400, "checks[0].value: required"],
      [
        "a bad pattern",
        { ...good, checks: [{ type: "regex", pattern: "(" }] },
        400,
        "checks[0].pattern: is not a pattern RE2 takes",
      ],
      [
        "two checks of one name",
        { ...good, checks: [{ type: "json" }, { type: "json", name: "json" }] },
        400,
        'checks[1].name: "json" is also check 0\'s name',
      ],
      [
        "an unknown judge prompt",
        { ...good, checks: [{ type: "judge", prompt: "nobody" }] },
        400,
        'checks[0].prompt: no prompt "nobody" in this project',
      ],
      ["a bad connection", { ...good, connection: "con_x" }, 400, "connection: must be a connection id (con_…)"],
      ["an unknown connection", { ...good, connection: "con_000000000000000000000000" }, 404, "connection"],
      ["a concurrency of 33", { ...good, concurrency: 33 }, 400, "concurrency: must be 1 to 32"],
      ["a concurrency of 0", { ...good, concurrency: 0 }, 400, "concurrency: must be 1 to 32"],
      ["a fractional concurrency", { ...good, concurrency: 1.5 }, 400, "concurrency: must be a whole number"],
      ["an unknown field", { ...good, colour: "red" }, 400, "colour"],
      ["a bad model setting", { ...good, model: { name: "caps", temperature: 9 } }, 400, "model.temperature"],
    ];
    const answered: [string, number, string][] = [];
    for (const [what, body] of cases) {
      const res = await startEvaluation(t, "support", body);
      answered.push([what, res.status, res.body.error]);
    }
    expect(answered).toEqual(
      cases.map(([what, , status, message]) => [what, status, expect.stringContaining(message)]),
    );
    // A prompt that does not exist is a 404 whatever the body.
    const missing = await startEvaluation(t, "nobody", good);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("prompt nobody not found");
    // A body that is not JSON, and no body.
    const raw = await t.request("POST", "/api/v2/prompts/support/evaluations", {
      payload: "{",
      headers: { "content-type": "application/json" },
    });
    expect(raw.status).toBe(400);
    expect(raw.body.error).toBe("body: is not valid JSON");
    expect(standIn.requests).toHaveLength(0);
    // Nothing was started.
    const list = await t.request("GET", "/api/v2/prompts/support/evaluations");
    expect(list.body.data.evaluations).toEqual([]);
  });

  it("a read key reads but cannot start or stop; another project's evaluation is not found", async () => {
    const connection = await standInConnection(t, standIn);
    await twoVersions(t);
    const dataset = await createDataset(t, "customers", [{ vars: { customer: "Ada" } }]);
    const body = {
      versions: ["production"],
      dataset: dataset.id,
      checks: [{ type: "json" }],
      connection,
      model: { name: "caps" },
    };
    const reader = await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" });
    const refused = await startEvaluation(t, "support", body, reader.key);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain("running an evaluation");
    expect(standIn.requests).toHaveLength(0);

    const started = await startEvaluation(t, "support", body);
    const id = started.body.data.id;
    const read = await t.request("GET", `/api/v2/evaluations/${id}`, { key: reader.key });
    expect(read.status).toBe(200);
    const stop = await t.request("POST", `/api/v2/evaluations/${id}/stop`, { key: reader.key });
    expect(stop.status).toBe(403);

    const other = await t.newProject();
    for (const [method, path] of [
      ["GET", `/api/v2/evaluations/${id}`],
      ["GET", `/api/v2/evaluations/${id}/cases`],
      ["POST", `/api/v2/evaluations/${id}/stop`],
      ["GET", `/api/v2/evaluations/${id}/events`],
    ] as const) {
      const res = await t.request(method, path, { key: other.key });
      expect([path, res.status, res.body.error]).toEqual([path, 404, `evaluation ${id} not found`]);
    }
    const bogus = await t.request("GET", "/api/v2/evaluations/ev_nothing");
    expect(bogus.status).toBe(404);
    // Their dataset is not theirs either.
    const theirs = await startEvaluation(t, "support", body, other.key);
    expect(theirs.status).toBe(404);
  });
});
