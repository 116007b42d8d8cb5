/**
 * Rollout plans' rows (migration 026, docs/rollouts.md "Plans"): a step is decided by one conditional UPDATE
 * on (plan, step, status), so of decisions racing on one step exactly one changes the row; a plan goes with
 * its prompt.
 */
import { describe, expect, it } from "vitest";
import { newId } from "../../src/store/ids.js";
import { type PlanRow, RolloutPlans } from "../../src/store/rollouts/rollout-plans.js";
import { makePrompt, saveVersion } from "../outcomes/outcome-support.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("rollout plan rows ($name)", (database) => {
  const t = useTestApp(database);

  const planRow = (promptId: string, from: string, version: string): PlanRow => ({
    id: newId("plan"),
    project_id: t.project.projectId,
    prompt_id: promptId,
    label: "production",
    version,
    from_version: from,
    steps: JSON.stringify([
      { percent: 5, min_duration_seconds: 60 },
      { percent: 50, min_duration_seconds: 60 },
    ]),
    guardrails: JSON.stringify({ ok_rate_drop: 0.025 }),
    status: "running",
    step: 0,
    step_started_at: "2026-11-28T00:00:00.000Z",
    started_at: "2026-11-28T00:00:00.000Z",
    started_by: "test",
    release_id: null,
    ended_at: null,
    updated_at: "2026-11-28T00:00:00.000Z",
    end_reason: null,
    last_decision: null,
    step_starts: null,
    decisions: null,
  });

  it("decides each step once: of eight racing decisions one wins, and a decision from a past step loses", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    const plans = new RolloutPlans(t.store.db);
    const row = planRow(id, v1, v2);
    await plans.insert(row);
    expect(await plans.active(t.project.projectId, id, "production")).toEqual(row);

    const at = "2026-11-28T00:01:00.000Z";
    const won = await Promise.all(
      Array.from({ length: 8 }, () =>
        new RolloutPlans(t.store.db).decide(
          row.id,
          { step: 0, status: "running" },
          { status: "running", step: 1, stepStartedAt: at },
          at,
        ),
      ),
    );
    expect(won.filter(Boolean).length).toBe(1);
    expect(
      await plans.decide(row.id, { step: 0, status: "running" }, { status: "aborted", step: 0, stepStartedAt: at }, at),
    ).toBe(false);
    // A paused plan is not decided by a runner that read it running.
    expect(
      await plans.decide(row.id, { step: 1, status: "running" }, { status: "paused", step: 1, stepStartedAt: at }, at),
    ).toBe(true);
    expect(await plans.running()).toEqual([]);
    expect(
      await plans.decide(
        row.id,
        { step: 1, status: "running" },
        { status: "completed", step: 1, stepStartedAt: at },
        at,
      ),
    ).toBe(false);
    const end = "2026-11-28T00:02:00.000Z";
    expect(
      await plans.decide(row.id, { step: 1, status: "paused" }, { status: "aborted", step: 1, stepStartedAt: at }, end),
    ).toBe(true);
    expect(await plans.get(t.project.projectId, row.id)).toEqual({
      ...row,
      status: "aborted",
      step: 1,
      step_started_at: at,
      ended_at: end,
      updated_at: end,
    });
    expect(await plans.active(t.project.projectId, id, "production")).toBeUndefined();
  });

  it("goes with its prompt", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    const plans = new RolloutPlans(t.store.db);
    const row = planRow(id, v1, v2);
    await plans.insert(row);
    expect((await plans.running()).map((p) => p.id)).toEqual([row.id]);
    const res = await t.request("DELETE", `/api/v2/prompts/${id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await plans.get(t.project.projectId, row.id)).toBeUndefined();
  });
});
