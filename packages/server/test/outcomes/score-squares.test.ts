/**
 * The score guardrail needs Σ score² per step (docs/rollouts.md "Plans"): each outcome row sums the squares
 * of its scores, flushes add them, compaction sums them, and `OutcomeReads` gives them back.
 */
import { describe, expect, it } from "vitest";
import { OutcomeReads } from "../../src/store/outcomes/outcome-reads.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { makePrompt } from "./outcome-support.js";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(DATABASES)("outcome score squares ($name)", (database) => {
  const t = useTestApp(database);

  const post = async (outcomes: unknown[]) => {
    const res = await t.request("POST", "/api/v2/outcomes", { body: { outcomes } });
    expect(res.body.data, JSON.stringify(res.body)).toEqual({ accepted: outcomes.length, refused: [] });
    await t.app.outcomes.flush();
  };
  const sums = async (id: string, from: number, to: number, byHour: boolean) => {
    const reads = new OutcomeReads(t.store.db);
    const series = await reads.series(t.project.projectId, id);
    const rows = await reads.counts(
      series.map((s) => s.id),
      iso(from),
      iso(to),
      byHour,
    );
    return rows.map((r) => [r.at, r.count, r.scoreSum, r.scoreSumSq, r.scoreCount]);
  };

  it("sums the squares of scores per minute, across flushes, and through compaction", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const now = Date.now();
    const minute = Math.floor(now / 60_000) * 60_000;
    const old = Math.floor((now - 30 * HOUR) / HOUR) * HOUR + 10 * 60_000;
    const one = (at: number, score?: number) => ({
      prompt: id,
      version,
      ok: true,
      ...(score === undefined ? {} : { score }),
      at: iso(at),
    });
    await post([one(minute, 0.5), one(minute, 0.25), one(minute)]);
    // A second flush adds to the same row.
    await post([one(minute, 1), one(old, 0.75), one(old + 60_000, 0.5)]);
    expect(await sums(id, minute, minute + 60_000, false)).toEqual([[iso(minute), 4, 1.75, 0.25 + 0.0625 + 1, 3]]);
    await t.app.outcomes.maintain(now);
    const hour = Math.floor(old / HOUR) * HOUR;
    const compacted = await t.store.db
      .selectFrom("outcome_counts")
      .select(["at", "span", "score_sum", "score_sum_sq"])
      .where("at", "=", iso(hour))
      .execute();
    expect(compacted.map((r) => [r.at, r.span, Number(r.score_sum), Number(r.score_sum_sq)])).toEqual([
      [iso(hour), 60, 1.25, 0.5625 + 0.25],
    ]);
    expect(await sums(id, hour, hour + HOUR, true)).toEqual([[iso(hour), 2, 1.25, 0.8125, 2]]);
  });
});
