/**
 * An evaluation's other surfaces, on both databases: the progress stream, a judge prompt (and a broken one), a
 * webhook check against the test's own receiver, the evaluation.completed webhook, and the metrics.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, ended, startEvaluation, twoVersions } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents, standInConnection } from "../support/playground.js";
import { type Receiver, startReceiver, verify } from "../webhooks/receiver.js";

const CASES = [{ vars: { customer: "Ada" } }, { vars: { customer: "Bob" } }, { vars: { customer: "Cy" } }];

describe.each(DATABASES)("evaluations' surfaces ($name)", (database) => {
  const t = useTestApp(database, {
    PROMPTSTORE_MODEL_ALLOW_PRIVATE: true,
    PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
    PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
    PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 1000,
    PROMPTSTORE_METRICS: true,
  });
  let standIn: StandIn;
  let receiver: Receiver | undefined;
  beforeEach(async () => {
    standIn = await startStandIn();
    capitals(standIn);
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
  });
  afterEach(async () => {
    await standIn.close();
    await receiver?.close();
    receiver = undefined;
  });

  async function setUp() {
    const connection = await standInConnection(t, standIn);
    const versions = await twoVersions(t);
    const dataset = await createDataset(t, "customers", CASES);
    return { connection, versions, dataset };
  }

  it("streams progress as it moves, then the whole evaluation, and ends", async () => {
    const { connection, dataset } = await setUp();
    // 400 ms an answer, one at a time: the runner saves its progress every second, so it moves at least twice.
    capitals(standIn, "slow", { firstDelayMs: 400 });
    const res = await startEvaluation(t, "support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: [{ type: "contains", value: "HELP" }],
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 1,
    });
    const stream = await t.request("GET", `/api/v2/evaluations/${res.body.data.id}/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    const events = parseEvents(stream.body as unknown as string);
    const progress = events.filter((e) => e.event === "progress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]?.data).toMatchObject({ status: "running", progress: { total: 6 } });
    const dones = progress.map((e) => e.data.progress.done);
    expect(dones).toEqual([...dones].sort((a, b) => a - b));
    const last = events.at(-1);
    expect(last?.event).toBe("done");
    expect(last?.data).toMatchObject({ id: res.body.data.id, status: "done", progress: { done: 6, total: 6 } });
    expect(last?.data.versions.map((v: any) => v.passed)).toEqual([3, 0]);
  });

  it("a judge prompt grades each answer; a broken judge errors its check, never passes it", async () => {
    const { connection, dataset } = await setUp();
    // The judge answers a score from the answer it was given (in its system prompt): 1 for help, 0.2 else.
    standIn.on("judge", {
      kind: "compute",
      answer: (body: any) => {
        const rubric = String(body.messages[0].content);
        return {
          content: rubric.includes("HELP")
            ? '{"score": 1, "reason": "helps"}'
            : '{"score": 0.2, "reason": "does not help"}',
        };
      },
    });
    standIn.on("rambler", { kind: "compute", answer: () => ({ content: "I think it is fine." }) });
    for (const [id, model] of [
      ["grader", "judge"],
      ["rambling-grader", "rambler"],
    ]) {
      const created = await t.request("POST", "/api/v2/prompts", {
        body: {
          id,
          name: id,
          sections: [{ title: "Rubric", content: "Grade this answer: {{ answer }}" }],
          model: { name: model },
          publish: true,
        },
      });
      expect(created.status).toBe(201);
    }
    const res = await startEvaluation(t, "support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: [{ type: "judge", prompt: "grader" }],
      connection,
      model: { name: "caps" },
      guard: false,
    });
    const view = await ended(t, res.body.data.id);
    expect(view.versions.map((v: any) => [v.passed, v.failed, v.errored, v.scores])).toEqual([
      [3, 0, 0, { judge: 1 }],
      [0, 3, 0, { judge: 0.2 }],
    ]);
    expect(view.checks[0]).toMatchObject({
      type: "judge",
      prompt: "grader",
      model: "judge",
      version: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(view.cases.items[0].results[1].verdicts).toEqual([
      { name: "judge", pass: false, score: 0.2, reason: "score 0.2 (passes at 0.5): does not help" },
    ]);

    const broken = await startEvaluation(t, "support", {
      versions: ["production"],
      dataset: dataset.id,
      checks: [
        { type: "contains", value: "YOU" },
        { type: "judge", prompt: "rambling-grader" },
      ],
      connection,
      model: { name: "caps" },
      guard: false,
    });
    const brokenView = await ended(t, broken.body.data.id);
    expect(brokenView.versions[0]).toMatchObject({ passed: 0, failed: 0, errored: 3, pass_rate: 0 });
    const cell = brokenView.cases.items[0].results[0];
    expect(cell.state).toBe("errored");
    expect(cell.error.code).toBe("check_error");
    expect(cell.error.message).toMatch(/^judge: judge: /);
    expect(cell.verdicts[0]).toEqual({ name: "contains", pass: true, score: 1, reason: 'contains "YOU"' });
    expect(cell.verdicts[1]).toMatchObject({ name: "judge", pass: null, score: null });
  });

  it("a webhook check asks the team's own receiver; the end is an evaluation.completed webhook; metrics count", async () => {
    const { connection, dataset } = await setUp();
    // The team's check: pass when the answer mentions help. Events are acknowledged.
    receiver = await startReceiver((request, _i, res) => {
      const payload = JSON.parse(request.body);
      if (payload.type !== "evaluation.check") return 204;
      const pass = String(payload.data.answer.content).includes("HELP");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ pass, score: pass ? 1 : 0, reason: pass ? "helpful" : "unhelpful" }));
      return undefined;
    });
    const checker = await t.request("POST", "/api/v2/webhooks", { body: { url: receiver.url, events: [] } });
    expect(checker.status).toBe(201);
    const watcher = await t.request("POST", "/api/v2/webhooks", {
      body: { url: `${receiver.url}/events`, events: ["evaluation.completed"] },
    });
    expect(watcher.status).toBe(201);
    const res = await startEvaluation(t, "support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: [{ type: "webhook", name: "house rules", endpoint: checker.body.data.id }],
      connection,
      model: { name: "caps" },
      guard: false,
    });
    const view = await ended(t, res.body.data.id);
    expect(view.versions.map((v: any) => [v.passed, v.failed, v.errored])).toEqual([
      [3, 0, 0],
      [0, 3, 0],
    ]);
    expect(view.cases.items[1].results[1].verdicts).toEqual([
      { name: "house rules", pass: false, score: 0, reason: "unhelpful" },
    ]);
    const checks = receiver.requests.filter((r) => JSON.parse(r.body).type === "evaluation.check");
    expect(checks).toHaveLength(6);
    const first = verify(checker.body.data.secret, checks[0]!) as any;
    expect(first.data).toMatchObject({ project_id: t.project.projectId, prompt_id: "support", evaluation_id: view.id });

    await receiver.waitFor((requests) => requests.some((r) => JSON.parse(r.body).type === "evaluation.completed"));
    const completed = receiver.requests.find((r) => JSON.parse(r.body).type === "evaluation.completed")!;
    expect((verify(watcher.body.data.secret, completed) as any).data).toMatchObject({
      type: "evaluation.completed",
      prompt_id: "support",
      evaluation: { id: view.id, status: "done", versions: [{ passed: 3 }, { passed: 0 }] },
    });

    // The same again is reused: counted as such. Nothing about the project in the metrics.
    const again = await startEvaluation(t, "support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: [{ type: "webhook", name: "house rules", endpoint: checker.body.data.id }],
      connection,
      model: { name: "caps" },
      guard: false,
    });
    expect(again.body.data.reused).toBe(true);
    const metrics = await t.request("GET", "/metrics", { key: null });
    const text = String(metrics.body);
    expect(text).toMatch(/promptstore_evaluations_total\{outcome="done"\} 1\n/);
    expect(text).toMatch(/promptstore_evaluations_total\{outcome="reused"\} 1\n/);
    expect(text).toMatch(/promptstore_evaluation_cases_total\{outcome="passed"\} 3\n/);
    expect(text).toMatch(/promptstore_evaluation_cases_total\{outcome="failed"\} 3\n/);
    expect(text).toMatch(/promptstore_evaluation_provider_seconds_count 6\n/);
    expect(text).not.toContain(t.project.projectId);
    expect(text).not.toContain("support");
  });
});
