/**
 * Minute rows older than a day are folded into hour rows without changing a total; rows older than the
 * retention are deleted (docs/outcomes.md, "Retention"). The maintenance is run as of a given time.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { makePrompt, publish, saveVersion } from "./outcome-support.js";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const hourStart = (ms: number) => Math.floor(ms / HOUR) * HOUR;

describe.each(DATABASES)("outcome maintenance ($name)", (database) => {
  const t = useTestApp(database);

  const post = async (outcomes: unknown[]) => {
    const res = await t.request("POST", "/api/v2/outcomes", { body: { outcomes } });
    expect(res.body.data, JSON.stringify(res.body)).toEqual({ accepted: outcomes.length, refused: [] });
    await t.app.outcomes.flush();
  };
  const rows = async (span: number) =>
    (
      await t.store.db
        .selectFrom("outcome_counts")
        .select(["at", "count"])
        .where("span", "=", span)
        .orderBy("at")
        .execute()
    ).map((r) => [r.at, Number(r.count)]);
  // One end for every read of a test: a read's default end is its own now.
  let end = 0;
  beforeEach(() => {
    end = Date.now() + 60_000;
  });
  const view = async (id: string, fromMs: number, toMs = end) =>
    (await t.request("GET", `/api/v2/prompts/${id}/outcomes?from=${iso(fromMs)}&to=${iso(toMs)}&by=arm`)).body.data;

  it("folds minute rows older than a day into hour rows; every total and point stays", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const now = Date.now();
    // Read by version (no label): placed whatever the time, within the retention.
    const one = (at: number, i: number) => ({
      prompt: id,
      version,
      ok: i % 3 !== 0,
      latency_ms: 50 * (i + 1),
      score: (i % 5) / 4,
      tokens: { input: i, output: 2 * i },
      at: iso(at),
    });
    const h30 = hourStart(now - 30 * HOUR);
    const h26 = hourStart(now - 26 * HOUR);
    await post([
      ...[0, 1, 2].map((i) => one(h30 + 10 * 60_000, i)),
      ...[3, 4].map((i) => one(h30 + 20 * 60_000, i)),
      ...[5, 6, 7, 8].map((i) => one(h26 + 5 * 60_000, i)),
      one(now, 9),
    ]);
    expect(await rows(1)).toEqual([
      [iso(h30 + 10 * 60_000), 3],
      [iso(h30 + 20 * 60_000), 2],
      [iso(h26 + 5 * 60_000), 4],
      [iso(Math.floor(now / 60_000) * 60_000), 1],
    ]);
    const before = await view(id, now - 31 * HOUR);
    expect(before.step).toBe("hour");
    expect(before.series[0].totals.count).toBe(10);
    expect(before.series[0].points.map((p: { at: string; count: number }) => [p.at, p.count])).toEqual([
      [iso(h30), 5],
      [iso(h26), 4],
      [iso(hourStart(now)), 1],
    ]);

    await t.app.outcomes.maintain(now);
    expect(await rows(60)).toEqual([
      [iso(h30), 5],
      [iso(h26), 4],
    ]);
    expect(await rows(1)).toEqual([[iso(Math.floor(now / 60_000) * 60_000), 1]]);
    expect(await view(id, now - 31 * HOUR)).toEqual(before);
    // Again: nothing left to fold.
    await t.app.outcomes.maintain(now);
    expect(await view(id, now - 31 * HOUR)).toEqual(before);

    // A late outcome of a folded hour is folded into it at the next pass.
    await post([one(h30 + 40 * 60_000, 10)]);
    await t.app.outcomes.maintain(now);
    expect(await rows(60)).toEqual([
      [iso(h30), 6],
      [iso(h26), 4],
    ]);
    const latency = await t.store.db
      .selectFrom("outcome_latency")
      .select((eb) => [eb.fn.sum<number | string>("count").as("n")])
      .where("span", "=", 60)
      .executeTakeFirst();
    expect(Number(latency?.n)).toBe(10);
  });

  it("deletes what is older than the retention, and the label history no outcome can be checked against", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    await publish(t, id, { version: v2 });
    await publish(t, id, { version: v1 });
    const now = Date.now();
    await post([
      { prompt: id, version: v2, ok: true, at: iso(now - 29 * 24 * HOUR) },
      { prompt: id, version: v1, ok: true, at: iso(now - 27 * 24 * HOUR) },
      { prompt: id, version: v1, ok: false },
    ]);
    const totals = async () =>
      (await view(id, now - 30 * 24 * HOUR)).series.map((s: { version: string; totals: { count: number } }) => [
        s.version === v1 ? "v1" : "v2",
        s.totals.count,
      ]);
    expect(await totals()).toEqual([
      ["v1", 2],
      ["v2", 1],
    ]);
    const history = async () =>
      (
        await t.store.db
          .selectFrom("label_history")
          .select("version")
          .where("prompt_id", "=", id)
          .orderBy("at")
          .execute()
      ).map((r) => (r.version === v1 ? "v1" : "v2"));
    expect(await history()).toEqual(["v1", "v2", "v1"]);

    // Two days on, the retention (30 days) has passed the 29-day-old outcome: it goes, with its series.
    await t.app.outcomes.maintain(now + 2 * 24 * HOUR);
    expect(await totals()).toEqual([["v1", 2]]);
    expect((await t.store.db.selectFrom("outcome_series").select("version").execute()).map((r) => r.version)).toEqual([
      v1,
    ]);
    expect(await history()).toEqual(["v1", "v2", "v1"]);
    // A month on, everything; the label history keeps what production serves.
    await t.app.outcomes.maintain(now + 31 * 24 * HOUR);
    expect(await totals()).toEqual([]);
    expect(await history()).toEqual(["v1"]);
    expect(await t.store.db.selectFrom("outcome_counts").select("at").execute()).toEqual([]);
    expect(await t.store.db.selectFrom("outcome_latency").select("at").execute()).toEqual([]);
  });
});

describe.each(DATABASES)("outcome retention from the configuration ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_OUTCOME_RETENTION_DAYS: 2 });

  it("refuses outcomes older than it", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const at = (days: number) => iso(Date.now() - days * 24 * HOUR);
    const res = await t.request("POST", "/api/v2/outcomes", {
      body: {
        outcomes: [
          { prompt: id, version, ok: true, at: at(1.9) },
          { prompt: id, version, ok: true, at: at(2.1) },
        ],
      },
    });
    expect(res.body.data).toEqual({
      accepted: 1,
      refused: [{ index: 1, field: "outcomes[1].at", message: "is older than the retention (2 days)" }],
    });
  });
});
