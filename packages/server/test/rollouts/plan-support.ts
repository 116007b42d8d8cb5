import { expect } from "vitest";
import { planEvidence } from "../../src/http/outcomes/wiring.js";
import type { PlanRunner } from "../../src/service/prompts/plans/plan-runner.js";
import type { Store } from "../../src/store/index.js";
import type { TestApp } from "../support/app.js";

/**
 * Time compressed by configuration (docs/rollouts.md "Plans"): an outcome row spans 100 ms, and the app's own
 * runner never ticks by itself in these tests (an hour): each test ticks a runner of its own, so every
 * decision is one the test asked for.
 */
export const COMPRESSED = { PROMPTSTORE_OUTCOME_MINUTE_MS: 100, PROMPTSTORE_ROLLOUT_TICK_MS: 3_600_000 } as const;

/** A runner on the app's plans and the store's outcomes, ticked by hand. */
export function handRunner(t: Pick<TestApp, "app">, store: Store): PlanRunner {
  return t.app.prompts.plans.runner(
    planEvidence(store),
    { tickMs: 3_600_000 },
    {
      failed: (_plan, error) => {
        throw error;
      },
    },
  );
}

export const plan = (steps: { percent: number; min_duration_seconds?: number; min_outcomes?: number }[]) => ({
  steps: steps.map((s) => ({ min_duration_seconds: 0, ...s })),
  guardrails: { ok_rate_drop: 0.05 },
});

type Call = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: any }>;

/**
 * Posts `n` outcomes of each arm of the label's rollout over HTTP (ok `okPer100` of every 100), stamped just
 * after the plan started so their rows (100 ms) start within it, then waits until that time has passed.
 */
export async function postArms(
  call: Call,
  promptId: string,
  arms: { candidate: string; current: string; candidateOk: number; currentOk: number; label?: string },
  startedAt: string,
  n = 2000,
): Promise<void> {
  const atMs = Date.parse(startedAt) + 200;
  const at = new Date(atMs).toISOString();
  const arm = (version: string, name: "candidate" | "current", okPer100: number) =>
    Array.from({ length: n }, (_, i) => ({
      prompt: promptId,
      version,
      label: arms.label ?? "production",
      arm: name,
      ok: i % 100 < okPer100,
      latency_ms: 100 + (i % 10),
      at,
    }));
  for (const outcomes of [
    arm(arms.candidate, "candidate", arms.candidateOk),
    arm(arms.current, "current", arms.currentOk),
  ]) {
    for (let i = 0; i < outcomes.length; i += 1000) {
      const batch = outcomes.slice(i, i + 1000);
      const res = await call("POST", "/api/v2/outcomes", { outcomes: batch });
      expect(res.body.data, JSON.stringify(res.body)).toEqual({ accepted: batch.length, refused: [] });
    }
  }
  // The rows are read up to now: wait until their 100 ms has begun.
  while (Date.now() <= atMs + 100) await new Promise((r) => setTimeout(r, 20));
}

/** The prompt's events of the rollout plans, as the events log holds them. */
export async function planEvents(store: Store, promptId: string): Promise<{ type: string; plan: any }[]> {
  const rows = await store.db
    .selectFrom("events")
    .select(["type", "details"])
    .where("prompt_id", "=", promptId)
    .where("type", "like", "rollout.%")
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ type: r.type, plan: JSON.parse(r.details ?? "{}").plan }));
}
