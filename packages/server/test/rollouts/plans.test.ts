/**
 * Rollout plans over HTTP (docs/rollouts.md "Plans"), on both databases: a plan starts with the label at its
 * first step, the runner decides from outcomes posted through `POST /api/v2/outcomes` (a worse candidate
 * aborts, an equal one advances step by step and completes), outcomes never shorten a step, a pause holds,
 * and a person may advance or abort by hand. Every decision is an audit row and an event with its numbers.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../../src/store/webhooks.js";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { COMPRESSED, handRunner, plan, planEvents, postArms } from "./plan-support.js";

describe.each(DATABASES)("rollout plans ($name)", (database) => {
  const t = useTestApp(database, COMPRESSED);
  let v1 = "";
  let v2 = "";
  const url = "/api/v2/prompts/bot/labels/production/plan";
  const call = (method: string, path: string, body?: unknown) =>
    t.request(method, path, body === undefined ? {} : { body });

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
  });

  const start = async (steps: Parameters<typeof plan>[0]) => {
    const res = await call("POST", url, { version: v2, ...plan(steps) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data;
  };
  const read = async () => (await t.request("GET", "/api/v2/prompts/bot")).body.data;
  const flushAndTick = async () => {
    await t.app.outcomes.flush();
    await handRunner(t, t.store).tick();
    return (await call("GET", url)).body.data;
  };

  it("starts at the first step, names every wrong field, and refuses a second plan of the label", async () => {
    const bad = await call("POST", url, {
      version: v2,
      steps: [
        { percent: 10, min_duration_seconds: 0 },
        { percent: 5, min_duration_seconds: 0 },
      ],
      guardrails: { ok_rate_drop: 0.05 },
    });
    expect([bad.status, bad.body.error]).toEqual([400, "steps[1].percent: must be more than the step before's 10"]);
    const view = await start([{ percent: 10 }, { percent: 50 }]);
    expect(view).toMatchObject({
      prompt_id: "bot",
      label: "production",
      version: v2,
      from_version: v1,
      status: "running",
      step: 0,
      percent: 10,
      ended_at: null,
      end_reason: null,
      release_id: null,
      last_decision: null,
      decisions: [],
    });
    expect(view.started_by).toMatch(/^key:/);
    expect((await read()).rollout).toMatchObject({ candidate: v2, percent: 10 });
    expect((await call("GET", url)).body.data).toEqual(view);
    const again = await call("POST", url, { version: v2, ...plan([{ percent: 20 }]) });
    expect([again.status, again.body.error]).toEqual([
      409,
      `label: production of prompt bot already has a running plan (${view.id}); abort it first`,
    ]);
    expect((await call("GET", "/api/v2/prompts/bot/labels/staging/plan")).status).toBe(404);
  });

  it("a worse candidate (ok 0.80 against 0.95) aborts: the label serves its version to everyone", async () => {
    const view = await start([{ percent: 50, min_duration_seconds: 3600, min_outcomes: 100_000 }]);
    await postArms(call, "bot", { candidate: v2, current: v1, candidateOk: 80, currentOk: 95 }, view.started_at);
    const after = await flushAndTick();
    expect([after.status, after.percent, after.end_reason]).toEqual(["aborted", 0, "guardrail breached: ok_rate"]);
    const decision = after.last_decision;
    expect([decision.verdict, decision.by, decision.step]).toEqual(["abort", "plan", 0]);
    expect(decision.minimums).toMatchObject({ min_duration_seconds: 3600, candidate_outcomes: 2000, met: false });
    expect(decision.results.map((r: any) => [r.guardrail, r.decision, r.threshold, r.candidate, r.current])).toEqual([
      ["ok_rate", "breached", 0.05, { count: 2000, value: 0.8 }, { count: 2000, value: 0.95 }],
    ]);
    const served = await read();
    expect([served.version, served.rollout]).toEqual([v1, undefined]);
    const events = await planEvents(t.store, "bot");
    expect(events.map((e) => [e.type, e.plan.status, e.plan.percent])).toEqual([["rollout.aborted", "aborted", 0]]);
    expect(events[0]?.plan.decision).toEqual(decision);
    // The webhook's body carries the same plan and numbers.
    const [recorded] = await t.store.events
      .since(t.project.projectId, 0, 100)
      .then((all) => all.filter((e) => e.type === "rollout.aborted"));
    const payload = JSON.parse(webhookPayload(t.project.projectId, recorded as never));
    expect([payload.type, payload.data.label, payload.data.version, payload.data.production_version]).toEqual([
      "rollout.aborted",
      "production",
      v2,
      v1,
    ]);
    expect(payload.data.plan).toEqual(events[0]?.plan);
    const audit = (await t.request("GET", "/api/v2/audit?limit=20")).body.data.entries;
    const row = audit.find((a: any) => a.action === "rollout.aborted");
    expect(row).toMatchObject({ actor: "plan", target: "bot:production", before: `${view.id} step 0 at 50%` });
    expect(row.after).toMatch(
      /^abort 0%; ok_rate -0\.1500 \[-0\.\d+,-0\.\d+\]\/0\.05 breached; \d+\/3600s 2000\/100000$/,
    );
    // A later tick decides nothing more.
    expect((await flushAndTick()).status).toBe("aborted");
    expect(await planEvents(t.store, "bot")).toHaveLength(1);
  });

  it("an equal candidate advances one step per decision and completes: the label moves to it", async () => {
    const view = await start([{ percent: 10 }, { percent: 25 }, { percent: 50 }, { percent: 100 }]);
    await postArms(call, "bot", { candidate: v2, current: v1, candidateOk: 95, currentOk: 95 }, view.started_at);
    const steps: [string, number, number][] = [];
    for (let i = 0; i < 3; i++) {
      const now = await flushAndTick();
      steps.push([now.status, now.step, now.percent]);
    }
    expect(steps).toEqual([
      ["running", 1, 25],
      ["running", 2, 50],
      ["completed", 2, 100],
    ]);
    const events = await planEvents(t.store, "bot");
    expect(events.map((e) => [e.type, e.plan.step, e.plan.percent, e.plan.decision.verdict])).toEqual([
      ["rollout.advanced", 1, 25, "advance"],
      ["rollout.advanced", 2, 50, "advance"],
      ["rollout.completed", 2, 100, "complete"],
    ]);
    expect(events[0]?.plan.decision.results[0]).toMatchObject({ guardrail: "ok_rate", decision: "holds" });
    // The prompt's history lists the plan with every decision that moved it, the numbers included.
    const { plans } = (await call("GET", "/api/v2/prompts/bot/plans")).body.data;
    expect(plans.map((p: any) => [p.id, p.status])).toEqual([[view.id, "completed"]]);
    expect(plans[0].decisions).toEqual(events.map((e) => e.plan.decision));
    const served = await read();
    expect([served.version, served.rollout]).toEqual([v2, undefined]);
    // The label's own events went out with each step: clients follow a plan with no change.
    const rollouts = await t.store.db
      .selectFrom("events")
      .select(["type", "details"])
      .where("type", "in", ["prompt.rollout_changed", "prompt.published"])
      .orderBy("id")
      .execute();
    expect(rollouts.map((r) => [r.type, JSON.parse(r.details ?? "{}").rollout?.percent ?? null])).toEqual([
      ["prompt.rollout_changed", 10],
      ["prompt.rollout_changed", 25],
      ["prompt.rollout_changed", 50],
      ["prompt.published", null],
    ]);
  });

  it("outcomes never shorten a step below its minimum duration, however many", async () => {
    const view = await start([{ percent: 10, min_duration_seconds: 3600 }, { percent: 50 }]);
    await postArms(call, "bot", { candidate: v2, current: v1, candidateOk: 99, currentOk: 95 }, view.started_at, 5000);
    const after = await flushAndTick();
    expect([after.status, after.step, after.percent, after.last_decision.verdict]).toEqual(["running", 0, 10, "wait"]);
    expect(after.last_decision.results[0].decision).toBe("holds");
    expect(after.last_decision.minimums).toMatchObject({
      candidate_outcomes: 5000,
      min_duration_seconds: 3600,
      met: false,
    });
    expect(await planEvents(t.store, "bot")).toEqual([]);
  });

  it("a pause holds, a resume goes on, and a person advances by hand and aborts", async () => {
    const view = await start([{ percent: 10 }, { percent: 25 }, { percent: 50 }]);
    expect((await call("POST", `${url}/pause`)).body.data.status).toBe("paused");
    expect((await call("POST", `${url}/pause`)).body.error).toBe(`plan: ${view.id} is paused already`);
    await postArms(call, "bot", { candidate: v2, current: v1, candidateOk: 95, currentOk: 95 }, view.started_at);
    const held = await flushAndTick();
    expect([held.status, held.step, held.last_decision]).toEqual(["paused", 0, null]);
    expect((await call("POST", `${url}/resume`)).body.data.status).toBe("running");
    expect((await flushAndTick()).step).toBe(1);

    const editor = await member(t, "editor");
    const base = `/api/dashboard/projects/${t.project.projectId}/prompts/bot/labels/production/plan`;
    const advanced = await editor.call("POST", `${base}/advance`);
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect([advanced.body.data.step, advanced.body.data.percent]).toEqual([2, 50]);
    expect(advanced.body.data.last_decision).toMatchObject({
      verdict: "advance",
      by: `user:${editor.email}`,
      results: [],
      minimums: null,
    });
    expect((await read()).rollout).toMatchObject({ candidate: v2, percent: 50 });
    const viewer = await member(t, "viewer");
    expect((await viewer.call("POST", `${base}/abort`)).status).toBe(403);
    const aborted = await editor.call("POST", `${base}/abort`);
    expect([aborted.body.data.status, aborted.body.data.end_reason]).toEqual([
      "aborted",
      `aborted by user:${editor.email}`,
    ]);
    const served = await read();
    expect([served.version, served.rollout]).toEqual([v1, undefined]);
    // A read key sees that a person acted, not who.
    const readKey = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const seen = (await t.request("GET", url, { key: readKey })).body.data;
    expect([seen.end_reason, seen.last_decision.by, seen.started_by]).toEqual([
      "aborted by user",
      "user",
      view.started_by,
    ]);
    const listed = (await t.request("GET", "/api/v2/prompts/bot/plans", { key: readKey })).body.data.plans;
    expect(listed[0].decisions.map((d: any) => [d.verdict, d.by])).toEqual([
      ["advance", "plan"],
      ["advance", "user"],
      ["abort", "user"],
    ]);
    expect((await planEvents(t.store, "bot")).map((e) => [e.type, e.plan.step])).toEqual([
      ["rollout.advanced", 1],
      ["rollout.advanced", 2],
      ["rollout.aborted", 2],
    ]);
    expect((await call("POST", `${url}/resume`)).status).toBe(409);
  });

  it("a publish on the label ends its plan, as aborted with the reason", async () => {
    const view = await start([{ percent: 10 }, { percent: 50 }]);
    const published = await call("POST", "/api/v2/prompts/bot/publish", { version: v2 });
    expect(published.status).toBe(200);
    const after = (await call("GET", url)).body.data;
    expect([after.id, after.status]).toEqual([view.id, "aborted"]);
    expect(after.end_reason).toMatch(/^the label was changed outside the plan by key:/);
    expect((await read()).version).toBe(v2);
    expect((await planEvents(t.store, "bot")).map((e) => e.type)).toEqual(["rollout.aborted"]);
  });

  it("removing the label ends its plan at once, as aborted with the reason", async () => {
    expect((await call("POST", "/api/v2/prompts/bot/publish", { version: v1, label: "staging" })).status).toBe(200);
    const stagingUrl = "/api/v2/prompts/bot/labels/staging/plan";
    const started = await call("POST", stagingUrl, { version: v2, ...plan([{ percent: 10 }, { percent: 50 }]) });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect((await call("DELETE", "/api/v2/prompts/bot/labels/staging")).status).toBe(200);
    const after = (await call("GET", stagingUrl)).body.data;
    expect([after.id, after.status]).toEqual([started.body.data.id, "aborted"]);
    expect(after.end_reason).toMatch(/^the label was changed outside the plan by key:/);
    expect((await planEvents(t.store, "bot")).map((e) => e.type)).toEqual(["rollout.aborted"]);
  });

  it("refuses outcomes from an arm the label never served during the plan, and counts them", async () => {
    const view = await start([{ percent: 10 }, { percent: 50 }]);
    const v3 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\nthree" } })).body.data.version;
    const at = new Date(Date.parse(view.started_at) + 200).toISOString();
    const res = await call("POST", "/api/v2/outcomes", {
      outcomes: [{ prompt: "bot", version: v3, label: "production", arm: "candidate", ok: true, at }],
    });
    expect(res.body.data.accepted).toBe(0);
    expect(res.body.data.refused).toEqual([expect.objectContaining({ index: 0, field: "outcomes[0].label" })]);
  });
});
