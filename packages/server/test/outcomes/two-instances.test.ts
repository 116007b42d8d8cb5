/**
 * Two instances on one PostgreSQL database take outcomes for the same prompt, series and minutes at once and
 * write them at once: the sums read back are exact (additive upserts, no read before a write).
 */
import { describe, expect, it } from "vitest";
import { bucketOf, quantile } from "../../src/service/outcomes/latency-histogram.js";
import { DATABASES } from "../support/databases.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");

describe.runIf(postgres)("outcomes on two instances of one PostgreSQL database", () => {
  const two = useTwoInstances(postgres as NonNullable<typeof postgres>);

  it("sums exactly what both took, written concurrently", async () => {
    const created = await two.call(0, "POST", "/api/v2/prompts", {
      id: "bot",
      name: "Bot",
      sections: [{ title: "Role", content: "You are a bot." }],
      publish: true,
    });
    const version = created.body.data.version as string;
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const at = [0, 1].map((m) => new Date(minute - m * 60_000).toISOString());
    const expected = { count: 0, ok: 0, scores: 0, scoreCount: 0, input: 0, output: 0 };
    const histogram = new Map<number, number>();
    const batch = (round: number, instance: number) =>
      Array.from({ length: 500 }, (_, i) => {
        const n = round * 1000 + instance * 500 + i;
        const latency = 10 + ((n * 37) % 5000);
        const ok = n % 7 !== 0;
        const score = n % 4 === 0 ? (n % 11) / 10 : undefined;
        expected.count += 1;
        expected.ok += ok ? 1 : 0;
        if (score !== undefined) {
          expected.scores += score;
          expected.scoreCount += 1;
        }
        expected.input += n % 100;
        expected.output += n % 10;
        histogram.set(bucketOf(latency), (histogram.get(bucketOf(latency)) ?? 0) + 1);
        return {
          prompt: "bot",
          version,
          // Version reads (in two minutes) and production reads (this minute: production served nothing a
          // minute before the prompt was made): two series.
          ...(n % 2 === 0 ? {} : { label: "production" }),
          ok,
          latency_ms: latency,
          ...(score === undefined ? {} : { score }),
          tokens: { input: n % 100, output: n % 10 },
          at: at[n % 2 === 0 ? (n >> 1) % 2 : 0],
        };
      });
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        [0, 1].map((i) => two.call(i, "POST", "/api/v2/outcomes", { outcomes: batch(round, i) })),
      );
      for (const answer of answers) expect(answer.body.data).toEqual({ accepted: 500, refused: [] });
      // Both write the same rows at the same moment.
      await Promise.all(two.apps.map((app) => app.outcomes.flush()));
    }
    const from = new Date(minute - 3_600_000).toISOString();
    const read = await two.call(1, "GET", `/api/v2/prompts/bot/outcomes?by=version&from=${from}`);
    const [series] = read.body.data.series;
    expect(read.body.data.series).toHaveLength(1);
    expect(series.totals).toEqual({
      count: 10_000,
      ok: expected.ok,
      ok_rate: Math.round((expected.ok / 10_000) * 1e6) / 1e6,
      score_mean: Math.round((expected.scores / expected.scoreCount) * 1e6) / 1e6,
      score_count: expected.scoreCount,
      latency_p50: quantile(histogram, 0.5),
      latency_p95: quantile(histogram, 0.95),
      tokens_input: expected.input,
      tokens_output: expected.output,
    });
    expect(series.points.map((p: { at: string; count: number }) => [p.at, p.count])).toEqual([
      [at[1], 2500],
      [at[0], 7500],
    ]);
    // The rows: version reads in two minutes, production reads in one; every latency counted once.
    const counts = await two.stores[0]!.db.selectFrom("outcome_counts").select("count").execute();
    expect(counts.map((r) => Number(r.count)).sort()).toEqual([2500, 2500, 5000]);
    const buckets = await two.stores[0]!.db.selectFrom("outcome_latency")
      .select((eb) => eb.fn.sum<string>("count").as("n"))
      .executeTakeFirst();
    expect(Number(buckets?.n)).toBe(10_000);
  });

  it("compacts on both instances at once and counts every minute row once", async () => {
    const created = await two.call(0, "POST", "/api/v2/prompts", {
      id: "bot",
      name: "Bot",
      sections: [{ title: "Role", content: "You are a bot." }],
    });
    const version = created.body.data.version as string;
    const now = Date.now();
    const hour = Math.floor((now - 30 * 3_600_000) / 3_600_000) * 3_600_000;
    // Read by version: placed whatever the time. 60 minutes of an hour 30 hours ago, on both instances.
    for (let part = 0; part < 2; part++) {
      const outcomes = Array.from({ length: 600 }, (_, i) => ({
        prompt: "bot",
        version,
        ok: i % 2 === 0,
        latency_ms: 100 + i,
        at: new Date(hour + (i % 60) * 60_000 + part * 1000).toISOString(),
      }));
      await Promise.all([0, 1].map((i) => two.call(i, "POST", "/api/v2/outcomes", { outcomes })));
      await Promise.all(two.apps.map((app) => app.outcomes.flush()));
    }
    const db = two.stores[0]!.db;
    expect((await db.selectFrom("outcome_counts").select("at").where("span", "=", 1).execute()).length).toBe(60);
    await Promise.all(two.apps.map((app) => app.outcomes.maintain(now)));
    const rows = await db.selectFrom("outcome_counts").select(["span", "at", "count", "ok"]).execute();
    expect(rows.map((r) => [r.span, r.at, Number(r.count), Number(r.ok)])).toEqual([
      [60, new Date(hour).toISOString(), 2400, 1200],
    ]);
    const latency = await db
      .selectFrom("outcome_latency")
      .select((eb) => [eb.fn.sum<string>("count").as("n"), eb.fn.min("span").as("span")])
      .executeTakeFirst();
    expect([Number(latency?.n), latency?.span]).toEqual([2400, 60]);
  });
});
