/**
 * What the server cannot place is refused one by one, naming the field, counted, and never kept: a prompt not
 * of the key's project, a version not of the prompt, a label or arm that did not serve the version around
 * the outcome's time (docs/outcomes.md, "Placing"). On both databases.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { makePrompt, publish, saveVersion } from "./outcome-support.js";

const inMinutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();
const short = (hash: string) => hash.slice(0, 7);

describe.each(DATABASES)("placing outcomes ($name)", (database) => {
  const t = useTestApp(database);

  const post = async (outcomes: unknown[], key?: string) => {
    const res = await t.request("POST", "/api/v2/outcomes", { body: { outcomes }, ...(key ? { key } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { accepted: number; refused: { index: number; field: string; message: string }[] };
  };
  const fields = (answer: { refused: { field: string }[] }) => answer.refused.map((r) => r.field);
  const count = async (id: string) => {
    await t.app.outcomes.flush();
    const series = (await t.request("GET", `/api/v2/prompts/${id}/outcomes`)).body.data.series as {
      totals: { count: number };
    }[];
    return series.reduce((n, s) => n + s.totals.count, 0);
  };

  it("refuses, by field, what it cannot place; counts both; keeps only the placed", async () => {
    const { id, version } = await makePrompt(t, "bot");
    const helper = await makePrompt(t, "helper");
    const good = { prompt: id, version, ok: true };
    const answer = await post([
      { ...good, label: "production" },
      { ...good, prompt: "nope" },
      { ...good, version: helper.version },
      { ...good, label: "staging" },
      { ...good, label: "production", arm: "candidate" },
      { ...good, arm: "current" },
      { ...good, at: inMinutes(6) },
      { ...good, at: inMinutes(-31 * 24 * 60) },
      good,
      { ...good, label: "latest" },
    ]);
    expect(answer).toEqual({
      accepted: 3,
      refused: [
        { index: 1, field: "outcomes[1].prompt", message: "no prompt nope in this project" },
        { index: 2, field: "outcomes[2].version", message: `prompt bot holds no version ${helper.version}` },
        {
          index: 3,
          field: "outcomes[3].label",
          message: expect.stringMatching(
            new RegExp(`^label staging of prompt bot did not serve ${short(version)} around `),
          ),
        },
        {
          index: 4,
          field: "outcomes[4].arm",
          message: expect.stringMatching(
            new RegExp(
              `^label production of prompt bot had no rollout with ${short(version)} as its candidate version around `,
            ),
          ),
        },
        { index: 5, field: "outcomes[5].arm", message: "needs the label whose rollout answered the read" },
        { index: 6, field: "outcomes[6].at", message: "is more than 5 minutes in the future" },
        { index: 7, field: "outcomes[7].at", message: "is older than the retention (30 days)" },
      ],
    });
    expect(await count(id)).toBe(3);
    expect(await count(helper.id)).toBe(0);
    const metrics = (await t.request("GET", "/metrics", { key: null })).body as string;
    expect(metrics).toContain('promptstore_outcomes_total{result="accepted"} 3');
    expect(metrics).toContain('promptstore_outcomes_total{result="refused"} 7');
    expect(metrics).toContain('promptstore_outcomes_total{result="dropped"} 0');
    expect(metrics).toContain("promptstore_outcomes_pending 0");
  });

  it("refuses a version or prompt of another project, both ways", async () => {
    const mine = await makePrompt(t, "bot");
    const other = await t.newProject();
    const theirs = await makePrompt(t, "bot", { key: other.key, content: "Another project's bot." });
    const only = await makePrompt(t, "only-theirs", { key: other.key });
    expect(fields(await post([{ prompt: "bot", version: theirs.version, ok: true }]))).toEqual(["outcomes[0].version"]);
    expect(fields(await post([{ prompt: "bot", version: mine.version, ok: true }], other.key))).toEqual([
      "outcomes[0].version",
    ]);
    expect(fields(await post([{ prompt: only.id, version: only.version, ok: false }]))).toEqual(["outcomes[0].prompt"]);
    expect(await count("bot")).toBe(0);
  });

  it("holds a label to what it served around the outcome's time, a minute either way and the latency before", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    await publish(t, id, { version: v2 });
    const production = (version: string, over: Record<string, unknown> = {}) => ({
      prompt: id,
      version,
      label: "production",
      ok: true,
      ...over,
    });
    const answer = await post([
      // Moved just now: v1 was still served a moment ago.
      production(v1),
      // Three minutes on, only v2 is served...
      production(v1, { at: inMinutes(3) }),
      production(v2, { at: inMinutes(3) }),
      // ...unless the answer took 3.5 minutes, and was read before the move.
      production(v1, { at: inMinutes(3), latency_ms: 210_000 }),
      // Ten minutes ago the prompt did not exist.
      production(v1, { at: inMinutes(-10) }),
      // Never served by production.
      production(await saveVersion(t, id, "A third bot, never published.")),
    ]);
    expect(answer.accepted).toBe(3);
    expect(fields(answer)).toEqual(["outcomes[1].label", "outcomes[4].label", "outcomes[5].label"]);
  });

  it("holds an arm to the label's rollout: current and candidate, and neither once it ended", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    await publish(t, id, { version: v2, percent: 10 });
    const arm = (version: string, which?: "current" | "candidate", at?: string) => ({
      prompt: id,
      version,
      label: "production",
      ok: true,
      ...(which ? { arm: which } : {}),
      ...(at ? { at } : {}),
    });
    const during = await post([
      arm(v1, "current"),
      arm(v2, "candidate"),
      arm(v2),
      arm(v1, "candidate"),
      arm(v2, "current"),
    ]);
    expect(during.accepted).toBe(3);
    expect(fields(during)).toEqual(["outcomes[3].arm", "outcomes[4].arm"]);
    // Aborted: production serves v1 to everyone.
    await publish(t, id, { version: v1 });
    const after = await post([
      arm(v2, "candidate", inMinutes(3)),
      arm(v1, "current", inMinutes(3)),
      arm(v1, undefined, inMinutes(3)),
    ]);
    expect(after.accepted).toBe(1);
    expect(fields(after)).toEqual(["outcomes[0].label", "outcomes[1].arm"]);
  });

  it("follows other labels, their removal, and a deleted prompt", async () => {
    const { id, version } = await makePrompt(t, "bot");
    await publish(t, id, { version, label: "staging" });
    const staging = (at?: string) => ({ prompt: id, version, label: "staging", ok: true, ...(at ? { at } : {}) });
    expect((await post([staging(), staging(inMinutes(3))])).accepted).toBe(2);
    expect((await t.request("DELETE", `/api/v2/prompts/${id}/labels/staging`)).status).toBe(200);
    expect(fields(await post([staging(), staging(inMinutes(3))]))).toEqual(["outcomes[1].label"]);
    // Two now, one three minutes on (after the default end of a read: now).
    expect(await count(id)).toBe(2);

    await t.request("POST", "/api/v2/outcomes", {
      body: { outcomes: [], instance: { id: "i1", serving: [{ prompt: id, label: "production", version }] } },
    });
    await t.app.outcomes.flush();
    expect((await t.request("DELETE", `/api/v2/prompts/${id}`)).status).toBe(200);
    expect(fields(await post([staging()]))).toEqual(["outcomes[0].prompt"]);
    // Made again with its id: it starts with no outcomes, no fleet and no history.
    const again = await makePrompt(t, "bot", { content: "You are a new bot." });
    expect(fields(await post([{ prompt: id, version, ok: true }]))).toEqual(["outcomes[0].version"]);
    expect(await count(id)).toBe(0);
    expect((await t.request("GET", `/api/v2/prompts/${id}/fleet`)).body.data.instances).toBe(0);
    for (const table of ["label_history", "outcome_series", "fleet_instances"] as const) {
      const rows = await t.store.db.selectFrom(table).select("prompt_id").where("prompt_id", "=", id).execute();
      expect(rows.length, table).toBe(table === "label_history" ? 1 : 0);
    }
    expect((await post([{ prompt: id, version: again.version, label: "production", ok: true }])).accepted).toBe(1);
  });

  it("keeps the fleet: what each instance serves now, per label and version, within five minutes", async () => {
    const { id, version: v1 } = await makePrompt(t, "bot");
    const v2 = await saveVersion(t, id, "You are the second bot.");
    const helper = await makePrompt(t, "helper");
    const report = async (instance: string, version: string, extra: unknown[] = []) => {
      const res = await t.request("POST", "/api/v2/outcomes", {
        body: {
          outcomes: [],
          instance: {
            id: instance,
            sdk: "typescript/1.2.0",
            serving: [{ prompt: id, label: "production", version }, ...extra],
          },
        },
      });
      expect(res.body.data).toEqual({ accepted: 0, refused: [] });
    };
    await report("i1", v1, [
      { prompt: id, label: "staging", version: v1 },
      { prompt: id, version: v2 },
    ]);
    await report("i2", v1, [
      { prompt: id, label: "canary", version: helper.version },
      { prompt: "nope", version: v1 },
    ]);
    await report("i3", v2);
    await t.app.outcomes.flush();
    const fleet = async () => (await t.request("GET", `/api/v2/prompts/${id}/fleet`)).body.data;
    const shape = (data: { serving: { label: string | null; version: string; instances: number }[] }) =>
      data.serving.map((s) => [s.label, s.version === v1 ? "v1" : "v2", s.instances]);
    const first = await fleet();
    expect(first).toMatchObject({ prompt: id, window_seconds: 300, instances: 3 });
    expect(shape(first)).toEqual([
      ["production", "v1", 2],
      ["production", "v2", 1],
      [null, "v2", 1],
      ["staging", "v1", 1],
    ]);
    expect(Date.now() - Date.parse(first.serving[0].last_seen)).toBeLessThan(60_000);
    // i2 moved on to v2; i1 was last heard from six minutes ago.
    await report("i2", v2);
    await t.app.outcomes.flush();
    await t.store.db
      .updateTable("fleet_instances")
      .set({ last_seen: inMinutes(-6) })
      .where("instance_id", "=", "i1")
      .execute();
    const second = await fleet();
    expect(second.instances).toBe(2);
    expect(shape(second)).toEqual([["production", "v2", 2]]);
    // Rows a day old go with the maintenance.
    await t.app.outcomes.maintain(Date.now() + 86_400_000 + 60_000);
    expect(await t.store.db.selectFrom("fleet_instances").select("instance_id").execute()).toEqual([]);
  });
});
