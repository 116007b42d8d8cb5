/**
 * Evaluations through the API, on both databases, against the stand-in answering the system prompt in
 * capitals: every verdict is known exactly.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, ended, startEvaluation, twoVersions } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";

/** Four cases: Ada and Cy regress on "assist", Bob improves, Dee fails on both. */
const CASES = [
  { vars: { customer: "Ada" }, expected: "<ROLE>\nYOU HELP ADA.\n</ROLE>" },
  { vars: { customer: "Bob" }, expected: "<ROLE>\nYOU ASSIST BOB.\n</ROLE>" },
  { vars: { customer: "Cy" }, expected: "<ROLE>\nYOU HELP CY.\n</ROLE>", tags: ["vip"] },
  { vars: { customer: "Dee" }, expected: "nothing like it" },
];
const CHECKS = [{ type: "expected" }, { type: "contains", name: "says you", value: "YOU" }];

describe.each(DATABASES)("evaluations ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    capitals(standIn);
  });
  afterEach(async () => {
    await standIn.close();
  });

  async function setUp() {
    const connection = await standInConnection(t, standIn);
    const versions = await twoVersions(t);
    const dataset = await createDataset(t, "customers", CASES);
    return { connection, versions, dataset };
  }

  it("runs two versions over a dataset: per version the counts, pass rate and scores; per case the verdicts", async () => {
    const { connection, versions, dataset } = await setUp();
    const res = await startEvaluation(t, "support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      guard: false,
    });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ status: "running", reused: false });
    const view = await ended(t, res.body.data.id);
    expect(view.status).toBe("done");
    expect(view.dataset).toEqual({ id: dataset.id, version: dataset.version, cases: 4 });
    expect(view.check_names).toEqual(["expected", "says you"]);
    expect(view.checks_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(view.progress).toEqual({ done: 8, total: 8 });
    expect(
      view.versions.map((v: any) => [
        v.ref,
        v.version,
        v.passed,
        v.failed,
        v.errored,
        v.pending,
        v.pass_rate,
        v.scores,
      ]),
    ).toEqual([
      ["production", versions.production, 2, 2, 0, 0, 0.5, { expected: 0.5, "says you": 1 }],
      ["latest", versions.latest, 1, 3, 0, 0, 0.25, { expected: 0.25, "says you": 1 }],
    ]);
    expect(view.compare).toEqual({ regressions: 2, improvements: 1 });
    // The stand-in counts an answer's characters as its output tokens: Ada, Bob and Dee alike, Cy one shorter.
    expect(view.versions[0].tokens.output).toBe("<ROLE>\nYOU HELP ADA.\n</ROLE>".length * 4 - 1);
    expect(standIn.requests).toHaveLength(8);

    // The cases, in dataset order, with each version's answer and verdicts.
    expect(view.cases.items.map((c: any) => [c.position, c.class, c.results.map((r: any) => r.state)])).toEqual([
      [0, "regression", ["passed", "failed"]],
      [1, "improvement", ["failed", "passed"]],
      [2, "regression", ["passed", "failed"]],
      [3, "failed", ["failed", "failed"]],
    ]);
    const ada = view.cases.items[0];
    expect(ada.case).toEqual(CASES[0]);
    expect(ada.results[1].answer).toEqual({ role: "assistant", content: "<ROLE>\nYOU ASSIST ADA.\n</ROLE>" });
    expect(ada.results[1].verdicts).toEqual([
      {
        name: "expected",
        pass: false,
        score: 0,
        reason:
          'differs at character 12: expected "<ROLE>\\nYOU HELP ADA.\\n</ROLE>", got "<ROLE>\\nYOU ASSIST ADA.\\n</ROLE>"',
      },
      { name: "says you", pass: true, score: 1, reason: 'contains "YOU"' },
    ]);

    // Regressions first: the compare filter.
    const regressions = await t.request("GET", `/api/v2/evaluations/${view.id}/cases?only=regression`);
    expect(regressions.body.data.items.map((c: any) => c.position)).toEqual([0, 2]);
    const improvements = await t.request("GET", `/api/v2/evaluations/${view.id}/cases?only=improvement`);
    expect(improvements.body.data.items.map((c: any) => c.position)).toEqual([1]);
    const paged = await t.request("GET", `/api/v2/evaluations/${view.id}/cases?limit=3`);
    expect(paged.body.data.next).toBe(2);
    const rest = await t.request("GET", `/api/v2/evaluations/${view.id}/cases?after=2&limit=3`);
    expect(rest.body.data).toMatchObject({ next: null });
    expect(rest.body.data.items.map((c: any) => c.position)).toEqual([3]);
  });

  it("never pays twice: the same evaluation again is reused at once with no provider call; two new cases cost two calls per version", async () => {
    const { connection, dataset } = await setUp();
    const body = {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      guard: false,
    };
    const first = await ended(t, (await startEvaluation(t, "support", body)).body.data.id);
    expect(standIn.requests).toHaveLength(8);

    const again = await startEvaluation(t, "support", body);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: "done", reused: true, reused_from: first.id });
    expect(again.body.data.versions.map((v: any) => v.pass_rate)).toEqual([0.5, 0.25]);
    expect(standIn.requests).toHaveLength(8);

    // Another check set over the same answers: judged again, asked nothing.
    const rechecked = await startEvaluation(t, "support", { ...body, checks: [{ type: "contains", value: "HELP" }] });
    const view = await ended(t, rechecked.body.data.id);
    expect(view.reused).toBe(false);
    expect(view.versions.map((v: any) => v.passed)).toEqual([4, 0]);
    expect(standIn.requests).toHaveLength(8);

    // A new dataset version with two more cases: two calls per version.
    const appended = await t.request("POST", `/api/v2/datasets/${dataset.id}/cases`, {
      body: { cases: [{ vars: { customer: "Eve" } }, { vars: { customer: "Fay" } }] },
    });
    expect(appended.status).toBe(200);
    const grown = await ended(t, (await startEvaluation(t, "support", body)).body.data.id);
    expect(grown.dataset).toMatchObject({ version: appended.body.data.version, cases: 6 });
    expect(grown.reused).toBe(false);
    expect(standIn.requests).toHaveLength(12);
    expect(grown.versions.map((v: any) => [v.passed, v.failed])).toEqual([
      [2, 4],
      [1, 5],
    ]);
  });

  it("obeys a 429's Retry-After: the evaluation slows down and does not fail", async () => {
    const { connection, dataset } = await setUp();
    standIn.on("busy", {
      kind: "error",
      status: 429,
      retryAfter: 1,
      times: 2,
      after: { kind: "compute", answer: (b: any) => ({ content: String(b.messages[0].content).toUpperCase() }) },
    });
    const started = Date.now();
    const res = await startEvaluation(t, "support", {
      versions: ["production"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "busy" },
      guard: false,
      concurrency: 1,
    });
    const view = await ended(t, res.body.data.id);
    expect(view.status).toBe("done");
    expect(view.versions[0]).toMatchObject({ passed: 2, failed: 2, errored: 0 });
    // Two refusals, then the four cases: each refusal was waited out (1 s each) before asking again.
    expect(standIn.requests).toHaveLength(6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });

  it("a provider failure fails its cell only, with the provider's code", async () => {
    const { connection, dataset } = await setUp();
    standIn.on("flaky", {
      kind: "error",
      status: 500,
      times: 1,
      after: { kind: "compute", answer: (b: any) => ({ content: String(b.messages[0].content).toUpperCase() }) },
    });
    const res = await startEvaluation(t, "support", {
      versions: ["production"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "flaky" },
      guard: false,
      concurrency: 1,
    });
    const view = await ended(t, res.body.data.id);
    expect(view.status).toBe("done");
    expect(view.versions[0]).toMatchObject({ passed: 1, failed: 2, errored: 1, pass_rate: 0.25 });
    expect(view.cases.items[0].results[0]).toMatchObject({
      state: "errored",
      answer: null,
      error: { code: "provider_error" },
    });
    expect(view.cases.items[0].class).toBe("errored");
    // The errored cell is asked again by the next evaluation of the same content; the rest is kept.
    const again = await ended(
      t,
      (
        await startEvaluation(t, "support", {
          versions: ["production"],
          dataset: dataset.id,
          checks: CHECKS,
          connection,
          model: { name: "flaky" },
          guard: false,
        })
      ).body.data.id,
    );
    expect(again.versions[0]).toMatchObject({ passed: 2, failed: 2, errored: 0 });
    expect(standIn.requests).toHaveLength(5);
  });

  it("stops when asked: what was judged stays, the rest is pending, status stopped", async () => {
    const connection = await standInConnection(t, standIn);
    await twoVersions(t);
    const many = Array.from({ length: 30 }, (_, i) => ({ vars: { customer: `C${i}` } }));
    const dataset = await createDataset(t, "many", many);
    capitals(standIn, "slow", { delayMs: 100, firstDelayMs: 100 });
    const res = await startEvaluation(t, "support", {
      versions: ["production"],
      dataset: dataset.id,
      checks: [{ type: "contains", value: "YOU" }],
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 1,
    });
    await expect.poll(() => standIn.requests.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const stopped = await t.request("POST", `/api/v2/evaluations/${res.body.data.id}/stop`);
    expect(stopped.status).toBe(200);
    const view = await ended(t, res.body.data.id);
    expect(view.status).toBe("stopped");
    expect(view.reason).toBe("stopped before every case was judged");
    const judged = view.versions[0].passed;
    expect(judged).toBeGreaterThanOrEqual(1);
    expect(judged).toBeLessThan(30);
    expect(view.versions[0].pending).toBe(30 - judged);
    const asked = standIn.requests.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(standIn.requests.length).toBe(asked);
    // Stopping an evaluation that ended changes nothing.
    const again = await t.request("POST", `/api/v2/evaluations/${res.body.data.id}/stop`);
    expect(again.body.data.status).toBe("stopped");
  });

  it("while it runs, a read shows the numbers of the runner's last tick: one row read, compare when it ends", async () => {
    const connection = await standInConnection(t, standIn);
    await twoVersions(t);
    const many = Array.from({ length: 40 }, (_, i) => ({ vars: { customer: `C${i}` } }));
    const dataset = await createDataset(t, "many", many);
    capitals(standIn, "slow", { delayMs: 50, firstDelayMs: 50 });
    const res = await startEvaluation(t, "support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: [{ type: "contains", value: "YOU" }],
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 1,
    });
    const id = res.body.data.id;
    // A read after the first tick that saw judged cases, while the evaluation still runs.
    let seen: any;
    await expect
      .poll(
        async () => {
          seen = (await t.request("GET", `/api/v2/evaluations/${id}?limit=1`)).body.data;
          return seen.status === "running" && seen.progress.done > 0;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(true);
    // The saved tick: its counts add up to its progress, and it compares nothing yet (summing every kept cell
    // on each read would compare them).
    const judged = seen.versions.reduce((n: number, v: any) => n + v.passed + v.failed + v.errored, 0);
    expect(judged).toBe(seen.progress.done);
    expect(seen.versions.map((v: any) => v.pending)).toEqual(
      seen.versions.map((v: any) => 40 - v.passed - v.failed - v.errored),
    );
    expect(seen.compare).toBeNull();
    await t.request("POST", `/api/v2/evaluations/${id}/stop`);
    const view = await ended(t, id);
    expect(view.compare).not.toBeNull();
  });

  it("records the start in the audit trail and the end as an evaluation.completed event", async () => {
    const { connection, dataset } = await setUp();
    const res = await startEvaluation(t, "support", {
      versions: ["latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      guard: false,
    });
    const view = await ended(t, res.body.data.id);
    const audit = await t.request("GET", "/api/v2/audit");
    const evaluationRows = audit.body.data.entries.filter((e: any) => e.action.startsWith("evaluation."));
    expect(evaluationRows.map((e: any) => [e.action, e.target, e.after])).toEqual([
      ["evaluation.started", "support", view.id],
    ]);
    // The event is recorded just after the evaluation's row says done: read until it is there.
    let completed: Awaited<ReturnType<typeof t.store.events.since>> = [];
    await expect
      .poll(async () => {
        const events = await t.store.events.since(t.project.projectId, 0, 100);
        completed = events.filter((e) => e.type === "evaluation.completed");
        return completed.length;
      })
      .toBe(1);
    expect(completed[0]).toMatchObject({
      prompt_id: "support",
      version: view.versions[0].version,
      evaluation: {
        id: view.id,
        status: "done",
        reused: false,
        dataset: { id: dataset.id, version: dataset.version },
        checks_hash: view.checks_hash,
        versions: [
          { version: view.versions[0].version, draft: false, passed: 1, failed: 3, errored: 0, pass_rate: 0.25 },
        ],
      },
    });
  });

  it("evaluates an unsaved draft under the hash it would save as", async () => {
    const { connection, dataset } = await setUp();
    const res = await startEvaluation(t, "support", {
      versions: [{ draft: { sections: [{ title: "Role", content: "You help {{ customer }}." }] } }, "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      guard: false,
    });
    const view = await ended(t, res.body.data.id);
    expect(view.versions[0]).toMatchObject({ ref: "draft", draft: true, passed: 2 });
  });
});
