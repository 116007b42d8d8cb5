import type { Check } from "@promptstore/core/evaluations/checks";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStopped } from "../../src/service/playground/model-call.js";
import { type TestApp, unlimitedCaller, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";
import { cell, checkRunner, refusal, says } from "./checks-support.js";

const RUBRIC =
  "Grade the answer.\n<answer>{{ answer }}</answer>\n<tools>{{ tool_calls }}</tools>\n" +
  "<expected>{{ expected }}</expected>\n<input>{{ input }}</input>\n<company>{{ company }}</company>\n<own>{{ vars.answer }}</own>";

/** What the stand-in's judge says, by the answer it is shown: its verdicts are known exactly. */
const JUDGE_SAYS: Record<string, string> = {
  polite: '{"score": 0.9, "reason": "polite and on topic"}',
  curt: "0.3",
  fenced: '```json\n{"score": 1, "reason": "fine"}\n```',
  rambling: "I think it is fine.",
  "too good": '{"score": 1.5}',
  stringy: '{"score": "high"}',
};

const judged = (body: Record<string, any>) => {
  const system = String(body.messages?.[0]?.content ?? "");
  const shown = /<answer>([\s\S]*?)<\/answer>/.exec(system)?.[1] ?? "";
  return { content: JUDGE_SAYS[shown] ?? "0" };
};

async function judgePrompt(t: TestApp, id: string, model: Record<string, unknown> | undefined, content = RUBRIC) {
  const res = await t.request("POST", "/api/v2/prompts", {
    body: { id, name: id, sections: [{ title: "Rubric", content }], ...(model ? { model } : {}), publish: true },
  });
  if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
  return res.body.data.version as string;
}

describe.each(DATABASES)("judge checks ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    standIn.on("judge-model", { kind: "compute", answer: judged });
    standIn.on("stand-in-model", { kind: "compute", answer: judged });
  });
  afterEach(async () => {
    await standIn.close();
  });

  const open = async () => t.app.connections.open(t.project.projectId, await standInConnection(t, standIn));

  it("fills the judge prompt with the answer, the case and expected, runs it on its own model, and passes at pass_score", async () => {
    const version = await judgePrompt(t, "grader", { name: "judge-model", temperature: 0 });
    const runner = checkRunner(t);
    const checks: Check[] = [
      { type: "judge", prompt: "grader" },
      { type: "judge", name: "lenient", prompt: "grader", version: "production", pass_score: 0.25 },
    ];
    const prepared = await runner.prepare(await unlimitedCaller(t), checks, await open());
    const pinned = [
      { type: "judge", prompt: "grader", version, model: "judge-model" },
      { type: "judge", name: "lenient", prompt: "grader", version, pass_score: 0.25, model: "judge-model" },
    ];
    expect(prepared.checks).toEqual(pinned);
    expect(prepared.names).toEqual(["judge", "lenient"]);
    expect(prepared.hash).toBe(sha256Hex(canonical(pinned)));

    const testCase = {
      vars: { company: "Acme", answer: "the case's own" },
      messages: [{ role: "user" as const, content: "Hi" }],
      expected: "Be polite",
    };
    const call = { id: "call_1", type: "function" as const, function: { name: "greet", arguments: '{"to":"Ada"}' } };
    expect(await runner.run(prepared, cell(says("polite", [call]), testCase))).toEqual([
      { pass: true, score: 0.9, reason: "score 0.9 (passes at 0.5): polite and on topic" },
      { pass: true, score: 0.9, reason: "score 0.9 (passes at 0.25): polite and on topic" },
    ]);
    expect(standIn.requests).toHaveLength(2);
    const sent = standIn.requests[0]?.body as Record<string, any>;
    expect(sent.model).toBe("judge-model");
    expect(sent.temperature).toBe(0);
    // The judge prompt alone, as the system message: the variables filled, the guard on.
    expect(sent.messages).toEqual([
      {
        role: "system",
        content:
          "<Rubric>\nGrade the answer.\n<answer>polite</answer>\n" +
          '<tools>[{"id":"call_1","type":"function","function":{"name":"greet","arguments":"{\\"to\\":\\"Ada\\"}"}}]</tools>\n' +
          "<expected>Be polite</expected>\n" +
          '<input>{"messages":[{"content":"Hi","role":"user"}],"vars":{"answer":"the case\'s own","company":"Acme"}}</input>\n' +
          "<company>Acme</company>\n<own>the case's own</own>\n</Rubric>\n\n" +
          DEFAULT_GUARD_TEXT,
      },
    ]);

    // A bare number is a score too; below pass_score fails.
    expect(await runner.run(prepared, cell(says("curt")))).toEqual([
      { pass: false, score: 0.3, reason: "score 0.3 (passes at 0.5)" },
      { pass: true, score: 0.3, reason: "score 0.3 (passes at 0.25)" },
    ]);
    // A case without expected and an answer without text or tools: empty, [] and the vars alone.
    expect(await runner.run(prepared, cell(says("fenced")))).toEqual([
      { pass: true, score: 1, reason: "score 1 (passes at 0.5): fine" },
      { pass: true, score: 1, reason: "score 1 (passes at 0.25): fine" },
    ]);
    expect(standIn.requests[5]?.body.messages[0].content).toBe(
      "<Rubric>\nGrade the answer.\n<answer>fenced</answer>\n<tools>[]</tools>\n<expected></expected>\n" +
        '<input>{"vars":{}}</input>\n<company>{{ company }}</company>\n<own>{{ vars.answer }}</own>\n</Rubric>\n\n' +
        DEFAULT_GUARD_TEXT,
    );
  });

  it("a judge that does not answer a score from 0 to 1, or whose provider fails, is an error of that check", async () => {
    await judgePrompt(t, "grader", { name: "judge-model" });
    await judgePrompt(t, "broken", { name: "broken-judge" }, "<answer>{{ answer }}</answer>");
    standIn.on("broken-judge", { kind: "error", status: 500 });
    const runner = checkRunner(t);
    const prepared = await runner.prepare(
      await unlimitedCaller(t),
      [
        { type: "judge", prompt: "grader" },
        { type: "judge", prompt: "broken" },
        { type: "contains", value: "o" },
      ],
      await open(),
    );
    const broken = {
      error: "judge: provider: answered 500 (The server had an error while processing your request.)",
    };
    expect(await runner.run(prepared, cell(says("rambling")))).toEqual([
      {
        error:
          'judge: the answer is not a score: "I think it is fine."; a judge answers a number from 0 to 1, or {"score": <0 to 1>, "reason": "…"}',
      },
      broken,
      { pass: false, score: 0, reason: 'does not contain "o"' },
    ]);
    expect(await runner.run(prepared, cell(says("too good")))).toEqual([
      { error: "judge: score 1.5 is not from 0 to 1" },
      broken,
      { pass: true, score: 1, reason: 'contains "o"' },
    ]);
    expect((await runner.run(prepared, cell(says("stringy"))))[0]).toEqual({
      error: 'judge: the answer\'s "score" is not a number: "\\"high\\""',
    });
  });

  it("a stopped cell rejects (RunStopped) rather than record an error", async () => {
    await judgePrompt(t, "slow", { name: "slow-judge" });
    standIn.on("slow-judge", { kind: "hang" });
    const runner = checkRunner(t);
    const prepared = await runner.prepare(await unlimitedCaller(t), [{ type: "judge", prompt: "slow" }], await open());
    const controller = new AbortController();
    const running = runner.run(prepared, cell(says("x"), {}, { signal: controller.signal }));
    while (standIn.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(RunStopped);
  });

  it("pins the judge: the label's version when prepared, the connection's first model when the version names none", async () => {
    const first = await judgePrompt(t, "grader", undefined);
    const runner = checkRunner(t);
    const caller = await unlimitedCaller(t);
    const connection = await open();
    const before = await runner.prepare(caller, [{ type: "judge", prompt: "grader" }], connection);
    expect(before.checks).toEqual([{ type: "judge", prompt: "grader", version: first, model: "stand-in-model" }]);

    // A new production version is a new check set; a set already prepared keeps its judge.
    const saved = await t.request("PUT", "/api/v2/prompts/grader", {
      body: { sections: [{ title: "Rubric", content: `Strict. ${RUBRIC}` }], publish: true },
    });
    expect(saved.status).toBe(200);
    const after = await runner.prepare(caller, [{ type: "judge", prompt: "grader" }], connection);
    expect(after.checks).toEqual([
      { type: "judge", prompt: "grader", version: saved.body.data.version, model: "stand-in-model" },
    ]);
    expect(after.hash).not.toBe(before.hash);
    // A hash prefix pins to the same full hash as the label it names.
    const byPrefix = await runner.prepare(
      caller,
      [{ type: "judge", prompt: "grader", version: first.slice(0, 10) }],
      connection,
    );
    expect(byPrefix.hash).toBe(before.hash);
    // A pinned set prepared again (an evaluation resumed) is the same set, whatever production serves now.
    expect((await runner.prepare(caller, before.checks, connection)).hash).toBe(before.hash);
    // What prepare answers serializes without its runtime (the connection's key).
    expect(JSON.parse(JSON.stringify(before))).toEqual({
      checks: before.checks,
      names: ["judge"],
      hash: before.hash,
      projectId: t.project.projectId,
    });
    expect(JSON.stringify(before)).not.toContain(standIn.apiKey);

    await runner.run(before, cell(says("polite")));
    expect(standIn.requests[0]?.body.model).toBe("stand-in-model");
    expect(standIn.requests[0]?.body.messages[0].content).toMatch(/^<Rubric>\nGrade the answer\./);
  });

  it("refuses at prepare a judge whose prompt or version does not resolve, naming the field", async () => {
    await judgePrompt(t, "grader", undefined);
    const runner = checkRunner(t);
    const caller = await unlimitedCaller(t);
    const connection = await open();
    const prepare = (judge: Check) => refusal(runner.prepare(caller, [{ type: "json" }, judge], connection));
    expect(await prepare({ type: "judge", prompt: "nope" })).toEqual({
      status: 400,
      message: 'checks[1].prompt: no prompt "nope" in this project',
    });
    expect(await prepare({ type: "judge", prompt: "grader", version: "0000000" })).toEqual({
      status: 400,
      message:
        'checks[1].version: "0000000" does not resolve in prompt grader: no version of prompt grader matches 0000000',
    });
    expect(await prepare({ type: "judge", prompt: "grader", version: "staging" })).toEqual({
      status: 400,
      message:
        'checks[1].version: "staging" does not resolve in prompt grader: must be production, latest, a label this project uses, or 7-64 lowercase hex characters of a version hash',
    });
    // A prompt of another project is not found.
    const other = await t.newProject();
    await t.request("POST", "/api/v2/prompts", {
      key: other.key,
      body: { id: "theirs", name: "theirs", sections: [{ title: "R", content: "x" }], publish: true },
    });
    expect(await prepare({ type: "judge", prompt: "theirs" })).toEqual({
      status: 400,
      message: 'checks[1].prompt: no prompt "theirs" in this project',
    });
    // No model anywhere: the judge cannot run.
    const bare = await t.app.connections.create(
      { projectId: t.project.projectId, operator: true },
      { name: "Bare", base_url: standIn.baseUrl, api_key: standIn.apiKey, models: [] },
    );
    const version = (await t.request("GET", "/api/v2/prompts/grader")).body.data.version as string;
    expect(
      await refusal(
        runner.prepare(
          caller,
          [{ type: "judge", prompt: "grader" }],
          await t.app.connections.open(t.project.projectId, bare.id),
        ),
      ),
    ).toEqual({
      status: 400,
      message: `checks[0].prompt: the judge's version ${version.slice(0, 12)} names no model and the connection lists none; give the judge prompt model settings`,
    });
    expect(standIn.requests).toHaveLength(0);
  });
});
