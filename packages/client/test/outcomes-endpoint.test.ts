/**
 * `record()` and the fleet report against the real server's endpoints (docs/outcomes.md): outcomes recorded
 * here are read back with `GET /api/v2/prompts/:id/outcomes`, what clients serve with `.../fleet`.
 *
 * These need the server's half of issue 40 (`POST /api/v2/outcomes`, `GET .../outcomes`, `GET .../fleet`, from
 * branch `outcomes`, merged into this one): written before it was, they ran (and passed) once it was.
 */
import { describe, expect, test } from "vitest";
import type { RunningServer } from "../../server/test/support/binary.js";
import type { Prompt } from "../src/index.js";
import { rolloutArm } from "../src/rollout.js";
import { DATABASES, sections, useFixture, waitFor } from "./support/harness.js";

interface Numbers {
  count: number;
  ok: number;
  ok_rate: number | null;
  score_mean: number | null;
  score_count: number;
  latency_p50: number | null;
  latency_p95: number | null;
  tokens_input: number;
  tokens_output: number;
}
interface Series {
  version: string;
  label: string | null;
  arm: string | null;
  totals: Numbers;
}
interface Fleet {
  prompt: string;
  window_seconds: number;
  serving: { label: string | null; version: string; instances: number; last_seen: string }[];
  instances: number;
}

describe.each(DATABASES)("record() against the server's endpoint ($name)", (database) => {
  const fx = useFixture(database);

  const start = () => fx.start();

  async function get<T>(server: RunningServer, path: string): Promise<T> {
    const res = await fetch(`${server.url}${path}`, { headers: { "x-api-key": fx.key } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: T }).data;
  }

  const outcomes = (server: RunningServer, query: string) =>
    get<{ series: Series[] }>(server, `/api/v2/prompts/support/outcomes?${query}`).then((v) => v.series);
  /** The server writes what it takes within a second: read until the count is there. */
  async function until(server: RunningServer, query: string, count: number): Promise<Series[]> {
    let series: Series[] = [];
    await waitFor(
      async () => {
        series = await outcomes(server, query);
        return series.reduce((n, s) => n + s.totals.count, 0) === count;
      },
      10_000,
      `${count} outcomes to be counted`,
    );
    return series;
  }

  test("outcomes recorded are counted per version, exactly", async () => {
    const server = await start();
    const client = fx.client({ baseUrl: server.url });
    const v1 = (await client.create({ name: "Support", sections: sections("v1"), publish: true })).version;
    const read = await client.get("support");
    client.record(read, { ok: true, latency_ms: 100, score: 1, tokens: { input: 10, output: 5 } });
    client.record(read, { ok: false, latency_ms: 300, score: 0, tokens: { input: 20, output: 0 } });
    client.record(read, { ok: true, latency_ms: 200, tags: { route: "chat" } });
    await client.flush();
    expect(client.outcomeStats()).toEqual({ recorded: 3, sent: 3, refused: 0, dropped: 0, invalid: 0, pending: 0 });
    const series = await until(server, "by=version", 3);
    expect(series).toHaveLength(1);
    expect(series[0]).toMatchObject({ version: v1, label: null, arm: null });
    expect(series[0]?.totals).toMatchObject({
      count: 3,
      ok: 2,
      score_count: 2,
      score_mean: 0.5,
      tokens_input: 30,
      tokens_output: 5,
    });
    expect(series[0]?.totals.ok_rate).toBeCloseTo(2 / 3, 5);
    expect(series[0]?.totals.latency_p50).not.toBeNull();
  });

  test("in a rollout, each outcome is counted on the arm its read got", async () => {
    const server = await start();
    const client = fx.client({ baseUrl: server.url });
    const v1 = (await client.create({ name: "Support", sections: sections("v1"), publish: true })).version;
    const v2 = (await client.save("support", { sections: sections("v2") })).version;
    await client.publish("support", v2, { percent: 50 });
    const users = Array.from({ length: 40 }, (_, i) => `user-${i}`);
    const candidates = users.filter((u) => rolloutArm("support", "production", 50, u) === "candidate").slice(0, 4);
    const currents = users.filter((u) => rolloutArm("support", "production", 50, u) === "current").slice(0, 6);
    for (const user of candidates) {
      const read = await client.get("support", { assign: user });
      expect(read.rollout?.arm).toBe("candidate");
      client.record(read, { ok: false });
    }
    for (const user of currents) client.record(await client.get("support", { assign: user }), { ok: true });
    await client.flush();
    expect(client.outcomeStats()).toMatchObject({ sent: 10, refused: 0 });
    const series = await until(server, "by=arm", 10);
    const byArm = Object.fromEntries(series.map((s) => [s.arm, s]));
    expect(byArm.candidate).toMatchObject({ version: v2, label: "production", totals: { count: 4, ok: 0 } });
    expect(byArm.current).toMatchObject({ version: v1, label: "production", totals: { count: 6, ok: 6 } });
  });

  test("an outcome the server cannot place is refused and counted; the others are taken", async () => {
    const server = await start();
    const client = fx.client({ baseUrl: server.url });
    await client.create({ name: "Support", sections: sections("v1"), publish: true });
    const other = await client.create({ name: "Other", sections: sections("other"), publish: true });
    const read = await client.get("support");
    client.record(read, { ok: true });
    // A version that is not the prompt's: the server refuses it alone.
    client.record({ ...read, version: other.version } as Prompt, { ok: true });
    client.record(read, { ok: false });
    await client.flush();
    expect(client.outcomeStats()).toEqual({ recorded: 3, sent: 2, refused: 1, dropped: 0, invalid: 0, pending: 0 });
    await until(server, "by=version", 2);
  });

  test("reportServing: the fleet view counts the instances serving each version, and follows a publish", async () => {
    const server = await start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = (await writer.create({ name: "Support", sections: sections("v1"), publish: true })).version;
    const options = { baseUrl: server.url, reportServing: true, outcomes: { heartbeatMs: 200 } };
    const first = fx.client(options);
    const second = fx.client(options);
    await first.get("support");
    await second.get("support");
    const fleet = () => get<Fleet>(server, "/api/v2/prompts/support/fleet");
    await waitFor(async () => (await fleet()).instances === 2, 10_000, "two instances in the fleet");
    expect((await fleet()).serving).toEqual([
      { label: "production", version: v1, instances: 2, last_seen: expect.any(String) },
    ]);
    const v2 = (await writer.save("support", { sections: sections("v2"), publish: true })).version;
    await waitFor(
      async () => (await fleet()).serving.some((s) => s.version === v2 && s.instances === 2),
      10_000,
      "both instances to report the new version",
    );
    expect((await fleet()).instances).toBe(2);
  });
});
