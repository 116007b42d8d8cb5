/**
 * What an instance gives evaluations is bounded, whatever is asked of it: at most
 * PROMPTSTORE_EVALUATION_MAX_RUNNING evaluations at once (the others wait, running, and start when a place
 * frees), and at most PROMPTSTORE_EVALUATION_MAX_CALLS model calls at once across all of them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { createDataset, ended, startEvaluation, twoVersions } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";

const ANSWER_MS = 150;

describe.each(DATABASES)("evaluations' bounds on an instance ($name)", (database) => {
  const t = useTestApp(database, {
    PROMPTSTORE_MODEL_ALLOW_PRIVATE: true,
    PROMPTSTORE_EVALUATION_MAX_RUNNING: 1,
    PROMPTSTORE_EVALUATION_MAX_CALLS: 2,
  });
  let standIn: StandIn;
  /** When each request reached the stand-in. */
  let arrivals: number[];
  beforeEach(async () => {
    standIn = await startStandIn();
    arrivals = [];
    standIn.on("slow", {
      kind: "compute",
      firstDelayMs: ANSWER_MS,
      answer: (body: any) => {
        arrivals.push(Date.now());
        return { content: String(body.messages[0].content).toUpperCase() };
      },
    });
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("runs one evaluation at a time with at most two calls, and every evaluation ends", async () => {
    const connection = await standInConnection(t, standIn);
    await twoVersions(t);
    const dataset = await createDataset(
      t,
      "cases",
      Array.from({ length: 6 }, (_, i) => ({ vars: { customer: `C${i}` } })),
    );
    const body = (checks: unknown[]) => ({
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks,
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 8,
    });
    const first = await startEvaluation(t, "support", body([{ type: "contains", value: "HELP" }]));
    // Another content (other settings: another model name is another answer key), started while the first runs.
    standIn.on("slow-too", {
      kind: "compute",
      firstDelayMs: ANSWER_MS,
      answer: (b: any) => {
        arrivals.push(Date.now());
        return { content: String(b.messages[0].content) };
      },
    });
    const second = await startEvaluation(t, "support", { ...body([{ type: "json" }]), model: { name: "slow-too" } });
    expect([first.status, second.status]).toEqual([202, 202]);
    // While the first runs, the second waits: nothing of it was asked.
    await expect.poll(() => arrivals.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const waiting = (await t.request("GET", `/api/v2/evaluations/${second.body.data.id}`)).body.data;
    expect(waiting).toMatchObject({ status: "running", progress: { done: 0, total: 12 } });
    const [a, b] = [await ended(t, first.body.data.id), await ended(t, second.body.data.id)];
    expect([a.status, b.status]).toEqual(["done", "done"]);
    expect(a.versions.map((v: any) => v.passed)).toEqual([6, 0]);
    expect(standIn.requests).toHaveLength(24);
    // Never more than two calls at once: of any three consecutive arrivals, the third came after the first's
    // answer could have ended.
    for (let i = 2; i < arrivals.length; i++) {
      expect((arrivals[i] as number) - (arrivals[i - 2] as number)).toBeGreaterThanOrEqual(ANSWER_MS - 20);
    }
  });
});
