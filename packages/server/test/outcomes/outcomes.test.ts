/**
 * POST /api/v2/outcomes folds a batch into aggregates that GET /api/v2/prompts/:id/outcomes reads back exactly
 * (docs/outcomes.md), on both databases.
 */
import { describe, expect, it } from "vitest";
import { OUTCOME_OPERATIONS } from "../../src/http/outcomes/outcome-operations.js";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { inBucket, makePrompt, publish, saveVersion } from "./outcome-support.js";

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

describe.each(DATABASES)("outcomes ($name)", (database) => {
  const t = useTestApp(database);

  it("folds a batch and reads back its counts, ok rate, mean score, latency p50/p95 and tokens", async () => {
    const { id, version } = await makePrompt(t, "bot");
    // Just now: the prompt did not exist (nor serve anything) earlier.
    const at = new Date().toISOString();
    // Ten answers, 100 ms to 1000 ms, each in a bucket of its own; 8 ok; five scored 0.2 to 1.0.
    const outcomes = Array.from({ length: 10 }, (_, i) => ({
      prompt: id,
      version,
      label: "production",
      ok: i < 8,
      latency_ms: (i + 1) * 100,
      ...(i % 2 === 0 ? { score: (i / 2 + 1) / 5 } : {}),
      tokens: { input: 100, output: 10 },
      tags: { route: "chat" },
      at,
    }));
    const res = await t.request("POST", "/api/v2/outcomes", { body: { outcomes } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { accepted: 10, refused: [] } });

    // Nothing is read until the instance writes (once a second, or now).
    const before = await t.request("GET", `/api/v2/prompts/${id}/outcomes`);
    expect(before.body.data.series).toEqual([]);
    expect(t.app.outcomes.pending).toBe(10);
    await t.app.outcomes.flush();
    expect(t.app.outcomes.pending).toBe(0);

    const read = await t.request("GET", `/api/v2/prompts/${id}/outcomes`);
    expect(read.status).toBe(200);
    const totals = {
      count: 10,
      ok: 8,
      ok_rate: 0.8,
      score_mean: 0.6,
      score_count: 5,
      // p50: rank 5 ends the 500 ms bucket, [2^(71/8), 2^(72/8)) = [469.5, 512); p95: rank 9.5 is half-way
      // through the 1000 ms bucket, [2^(79/8), 2^(80/8)).
      latency_p50: 512,
      latency_p95: inBucket(80, 0.5),
      tokens_input: 1000,
      tokens_output: 100,
    };
    expect(totals.latency_p95).toBe(980.6);
    const data = read.body.data;
    expect(data).toMatchObject({ prompt: id, step: "hour", by: "version" });
    expect(Date.parse(data.to) - Date.parse(data.from)).toBeGreaterThanOrEqual(86_400_000);
    expect(data.series).toEqual([
      {
        version,
        label: null,
        arm: null,
        totals,
        points: [{ at: `${at.slice(0, 13)}:00:00.000Z`, ...totals }],
      },
    ]);

    // By the minute over the last hour: one point, at the outcomes' minute.
    const minutes = await t.request("GET", `/api/v2/prompts/${id}/outcomes?from=${encodeURIComponent(minutesAgo(60))}`);
    expect(minutes.body.data.step).toBe("minute");
    expect(minutes.body.data.series[0].points).toEqual([{ at: `${at.slice(0, 16)}:00.000Z`, ...totals }]);
  });

  it("adds batches and instances alike, and groups by version, label or arm", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    await publish(t, id, { version: v1, label: "staging" });
    await publish(t, id, { version: v2, percent: 25 });
    const one = (over: Record<string, unknown>) => ({ prompt: id, ok: true, ...over });
    const batches = [
      [
        one({ version: v1, label: "production", arm: "current" }),
        one({ version: v2, label: "production", arm: "candidate", ok: false }),
      ],
      [one({ version: v1, label: "production", arm: "current" }), one({ version: v1, label: "staging" })],
      [one({ version: v1 }), one({ version: v2, label: "production" })],
    ];
    for (const outcomes of batches) {
      const res = await t.request("POST", "/api/v2/outcomes", { body: { outcomes } });
      expect(res.body.data).toEqual({ accepted: 2, refused: [] });
      await t.app.outcomes.flush();
    }
    const series = async (by: string, extra = "") =>
      (await t.request("GET", `/api/v2/prompts/${id}/outcomes?by=${by}${extra}`)).body.data.series.map(
        (s: { version: string; label: string | null; arm: string | null; totals: { count: number; ok: number } }) => [
          s.version === v1 ? "v1" : "v2",
          s.label,
          s.arm,
          s.totals.count,
          s.totals.ok,
        ],
      );
    expect(await series("version")).toEqual([
      ["v1", null, null, 4, 4],
      ["v2", null, null, 2, 1],
    ]);
    expect(await series("label")).toEqual([
      ["v1", "production", null, 2, 2],
      ["v2", "production", null, 2, 1],
      ["v1", null, null, 1, 1],
      ["v1", "staging", null, 1, 1],
    ]);
    expect(await series("arm")).toEqual([
      ["v1", "production", "current", 2, 2],
      ["v1", null, null, 1, 1],
      ["v1", "staging", null, 1, 1],
      ["v2", "production", null, 1, 1],
      ["v2", "production", "candidate", 1, 0],
    ]);
    expect(await series("arm", "&label=production")).toEqual([
      ["v1", "production", "current", 2, 2],
      ["v2", "production", null, 1, 1],
      ["v2", "production", "candidate", 1, 0],
    ]);
  });

  it("takes a read key, and a batch counts once against the rate limit", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const read = await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" });
    const outcomes = Array.from({ length: 1000 }, () => ({ prompt: id, version, ok: true }));
    const res = await t.request("POST", "/api/v2/outcomes", { key: read.key, body: { outcomes } });
    expect(res.status).toBe(200);
    expect(res.body.data.accepted).toBe(1000);
    const limit = Number(res.headers["x-ratelimit-limit"]);
    const remaining = Number(res.headers["x-ratelimit-remaining"]);
    const again = await t.request("POST", "/api/v2/outcomes", { key: read.key, body: { outcomes: [] } });
    expect(again.body.data).toEqual({ accepted: 0, refused: [] });
    expect(Number(again.headers["x-ratelimit-remaining"])).toBe(remaining - 1);
    expect(limit).toBeGreaterThan(0);
    // The reads too.
    expect((await t.request("GET", `/api/v2/prompts/${id}/outcomes`, { key: read.key })).status).toBe(200);
    expect((await t.request("GET", `/api/v2/prompts/${id}/fleet`, { key: read.key })).status).toBe(200);
  });

  it("refuses a malformed batch whole, naming the field, and keeps nothing of it", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const good = { prompt: id, version, ok: true };
    const cases: [unknown, string][] = [
      [[], "body: must be an object, not an array"],
      [{}, "outcomes: required"],
      [{ outcomes: {} }, "outcomes: must be an array, not an object"],
      [{ outcomes: Array.from({ length: 1001 }, () => good) }, "outcomes: at most 1000 a batch"],
      [
        { outcomes: [good, good, { ...good, version: "abc" }] },
        "outcomes[2].version: must be a version's full hash: 64 lowercase hex characters",
      ],
      [{ outcomes: [{ ...good, ok: "yes" }] }, "outcomes[0].ok: must be true or false, not a string"],
      [{ outcomes: [good, { ...good, latency_ms: -1 }] }, "outcomes[1].latency_ms: must be at least 0"],
      [{ outcomes: [{ ...good, latency_ms: 3_600_001 }] }, "outcomes[0].latency_ms: must be at most 3600000"],
      [{ outcomes: [{ ...good, score: 1.5 }] }, "outcomes[0].score: must be at most 1"],
      [{ outcomes: [{ ...good, tokens: { input: 1.5 } }] }, "outcomes[0].tokens.input: must be a whole number"],
      [{ outcomes: [{ ...good, arm: "left" }] }, 'outcomes[0].arm: must be one of "candidate", "current"'],
      [{ outcomes: [{ ...good, at: "yesterday" }] }, "outcomes[0].at: must be an ISO 8601 timestamp"],
      [
        { outcomes: [{ ...good, tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"])) }] },
        "outcomes[0].tags: must have at most 10 entries",
      ],
      [{ outcomes: [{ ...good, mood: "fine" }] }, "outcomes[0].mood: is not a known field"],
      [{ outcomes: [good], instance: { id: "" } }, "instance.id: must not be empty"],
      [
        { outcomes: [good], instance: { id: "i1", serving: [{ prompt: id, version: "x" }] } },
        "instance.serving[0].version: must be a version's full hash: 64 lowercase hex characters",
      ],
    ];
    for (const [body, error] of cases) {
      const res = await t.request("POST", "/api/v2/outcomes", { body });
      expect([res.status, res.body], error).toEqual([400, { success: false, error }]);
    }
    expect(t.app.outcomes.pending).toBe(0);
    await t.app.outcomes.flush();
    expect((await t.request("GET", `/api/v2/prompts/${id}/outcomes`)).body.data.series).toEqual([]);
  });

  it("answers what the OpenAPI document says, on every route", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const holds = (operationId: string, data: unknown) => {
      const op = OUTCOME_OPERATIONS.find((o) => o.operationId === operationId);
      const parsed = op?.response.safeParse(data);
      expect(parsed?.success ? "" : JSON.stringify(parsed?.error.issues), operationId).toBe("");
    };
    const reported = await t.request("POST", "/api/v2/outcomes", {
      body: {
        outcomes: [
          { prompt: id, version, label: "production", ok: true, latency_ms: 5, score: 1 },
          { prompt: id, version, ok: false },
          { prompt: "nope", version, ok: true },
        ],
        instance: {
          id: "i1",
          serving: [
            { prompt: id, label: "production", version },
            { prompt: id, version },
          ],
        },
      },
    });
    expect(reported.body.data.refused).toHaveLength(1);
    holds("reportOutcomes", reported.body.data);
    await t.app.outcomes.flush();
    for (const by of ["version", "label", "arm"]) {
      const read = await t.request("GET", `/api/v2/prompts/${id}/outcomes?by=${by}`);
      expect(read.body.data.series.length).toBeGreaterThan(0);
      holds("getPromptOutcomes", read.body.data);
    }
    const fleet = await t.request("GET", `/api/v2/prompts/${id}/fleet`);
    expect(fleet.body.data.serving).toHaveLength(2);
    holds("getPromptFleet", fleet.body.data);
  });

  it("the dashboard reads the same numbers with a viewer's session; a session cannot report", async () => {
    const { id, version } = await makePrompt(t, "bot");
    await t.request("POST", "/api/v2/outcomes", {
      body: {
        outcomes: [{ prompt: id, version, label: "production", ok: true, latency_ms: 100 }],
        instance: { id: "i1", serving: [{ prompt: id, label: "production", version }] },
      },
    });
    await t.app.outcomes.flush();
    const viewer = await member(t, "viewer");
    const base = `/api/dashboard/projects/${t.project.projectId}/prompts/${id}`;
    const dashboard = await viewer.call("GET", `${base}/outcomes?by=label`);
    const api = await t.request(
      "GET",
      `/api/v2/prompts/${id}/outcomes?by=label&from=${dashboard.body.data.from}&to=${dashboard.body.data.to}`,
    );
    expect(dashboard.status).toBe(200);
    expect(dashboard.body.data.series[0].totals.count).toBe(1);
    expect(dashboard.body).toEqual(api.body);
    expect((await viewer.call("GET", `${base}/fleet`)).body.data.instances).toBe(1);
    const other = await t.newProject();
    expect((await viewer.call("GET", `/api/dashboard/projects/${other.projectId}/prompts/${id}/fleet`)).status).toBe(
      404,
    );
    expect((await viewer.call("POST", "/api/v2/outcomes", { body: { outcomes: [] } })).status).toBe(401);
  });

  it("reads: 404 for a prompt of no project of the key, 400 for a range it cannot answer", async () => {
    await makePrompt(t, "bot");
    const other = await t.newProject();
    expect((await t.request("GET", "/api/v2/prompts/bot/outcomes", { key: other.key })).status).toBe(404);
    expect((await t.request("GET", "/api/v2/prompts/bot/fleet", { key: other.key })).status).toBe(404);
    const bad = async (query: string) => (await t.request("GET", `/api/v2/prompts/bot/outcomes?${query}`)).body.error;
    expect(await bad("by=day")).toBe('by: must be one of "version", "label", "arm"');
    expect(await bad(`from=${minutesAgo(1)}&to=${minutesAgo(2)}`)).toBe("from: must be before to");
    expect(await bad(`from=${minutesAgo(60 * 24 * 100)}`)).toMatch(/^from: the range holds 2\d{3} hours; 1500 at most/);
    expect(await bad(`from=${minutesAgo(60 * 24 * 2)}&step=minute&to=${minutesAgo(60 * 24)}`)).toBeUndefined();
  });
});
