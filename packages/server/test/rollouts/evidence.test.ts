/**
 * A rollout's evidence, read from outcomes posted through `POST /api/v2/outcomes` (docs/rollouts.md "Plans"):
 * each arm's rows of the rollout's label, summed into the plan's steps, decide the plan. A worse candidate
 * (ok rate 0.80 against 0.95) is an abort, whatever the step's minimums.
 */
import { decidePlan, strataOf } from "@promptstore/core/rollouts/plan-decision";
import { describe, expect, it } from "vitest";
import { LATENCY_BOUNDS_MS, rolloutEvidence } from "../../src/service/outcomes/rollout-evidence.js";
import { OutcomeReads } from "../../src/store/outcomes/outcome-reads.js";
import { makePrompt, publish, saveVersion } from "../outcomes/outcome-support.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const plan = {
  steps: [
    { percent: 50, min_duration_seconds: 600, min_outcomes: 1000 },
    { percent: 100, min_duration_seconds: 0 },
  ],
  guardrails: { ok_rate_drop: 0.025 },
};

describe.each(DATABASES)("a rollout's evidence ($name)", (database) => {
  const t = useTestApp(database);

  it("reads each arm of the label's rollout, and a worse candidate aborts the plan", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    const startMs = Math.floor(Date.now() / 60_000) * 60_000;
    await publish(t, id, { version: v2, percent: 50 });
    const at = new Date().toISOString();
    const arm = (version: string, name: "candidate" | "current", okPer100: number) =>
      Array.from({ length: 1000 }, (_, i) => ({
        prompt: id,
        version,
        label: "production",
        arm: name,
        ok: i % 100 < okPer100,
        latency_ms: 100 + (i % 10),
        score: i % 2 === 0 ? 1 : 0.5,
        at,
      }));
    for (const outcomes of [
      arm(v2, "candidate", 80),
      arm(v2, "candidate", 80),
      arm(v1, "current", 95),
      arm(v1, "current", 95),
      // Not evidence: reads by version (no label).
      [
        { prompt: id, version: v1, ok: false, at },
        { prompt: id, version: v2, ok: false, at },
      ],
    ]) {
      const res = await t.request("POST", "/api/v2/outcomes", { body: { outcomes } });
      expect(res.body.data, JSON.stringify(res.body)).toEqual({ accepted: outcomes.length, refused: [] });
    }
    await t.app.outcomes.flush();

    const rows = await rolloutEvidence(new OutcomeReads(t.store.db), {
      projectId: t.project.projectId,
      promptId: id,
      label: "production",
      current: v1,
      candidate: v2,
      fromMs: startMs,
      toMs: Date.now() + 60_000,
    });
    const strata = strataOf([startMs], rows);
    expect(strata.map((s) => [s.candidate.count, s.candidate.ok, s.current.count, s.current.ok])).toEqual([
      [2000, 1600, 2000, 1900],
    ]);
    expect([
      strata[0]?.candidate.score_count,
      strata[0]?.candidate.score_sum,
      strata[0]?.candidate.score_sum_sq,
    ]).toEqual([2000, 1500, 1250]);
    // The latency histogram in the statistics' buckets: 100–109 ms are buckets 54 (≤ 2^(54/8) = 107.6) and 55.
    const latency = strata[0]?.candidate.latency ?? [];
    expect(latency.length).toBe(LATENCY_BOUNDS_MS.length + 1);
    expect(latency.flatMap((n, b) => (n > 0 ? [[b, n]] : []))).toEqual([
      [54, 1600],
      [55, 400],
    ]);

    const decision = decidePlan(plan, 0, startMs, Date.now(), strata);
    expect([decision.verdict, decision.percent, decision.minimums.met]).toEqual(["abort", 0, false]);
    expect(decision.results.map((r) => [r.guardrail, r.decision, r.candidate, r.current])).toEqual([
      ["ok_rate", "breached", { count: 2000, value: 0.8 }, { count: 2000, value: 0.95 }],
    ]);
  });
});
