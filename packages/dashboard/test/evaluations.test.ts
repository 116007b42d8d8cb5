import type { EvaluationView, VersionSummary } from "@promptstore/core/evaluations/evaluations";
import { describe, expect, it } from "vitest";
import {
  blankCheck,
  CHECK_FIELDS,
  CHECK_TYPES,
  checkNames,
  checkToForm,
  formsToChecks,
  sameChecks,
} from "../src/evaluations/check-form";
import {
  defaultVersions,
  firstFilter,
  latency,
  percent,
  releaseEvaluation,
  statusLine,
  versionTitle,
} from "../src/evaluations/results";

const H = (c: string) => c.repeat(64);

describe("the check editor's forms", () => {
  it("every check type has its fields, and a blank check of it is sent as that type", () => {
    expect(Object.keys(CHECK_FIELDS).sort()).toEqual([...CHECK_TYPES].sort());
    const filled = CHECK_TYPES.map((type) => {
      const form = blankCheck(type);
      return {
        ...form,
        value: type === "max_chars" ? "200" : "refund",
        pattern: "^Hi",
        function: "lookup",
        prompt: "tone-judge",
        endpoint: "whk_0123456789abcdef01234567",
      };
    });
    const result = formsToChecks(filled);
    expect(result).toEqual({
      ok: true,
      checks: [
        { type: "equals", value: "refund" },
        { type: "contains", value: "refund" },
        { type: "not_contains", value: "refund" },
        { type: "regex", pattern: "^Hi" },
        { type: "json" },
        { type: "json_schema" },
        { type: "tool_call", function: "lookup" },
        { type: "max_chars", value: 200 },
        { type: "expected", trim: true },
        { type: "judge", prompt: "tone-judge" },
        { type: "webhook", endpoint: "whk_0123456789abcdef01234567" },
      ],
    });
  });

  it("round-trips every field of every type through the form", () => {
    const checks = [
      { type: "equals", name: "exact", value: "Hi", trim: true, case_insensitive: true },
      { type: "expected", case_insensitive: true },
      { type: "contains", value: "YOU", case_insensitive: true },
      { type: "regex", pattern: "\\d+", flags: "i" },
      { type: "json_schema", schema: { type: "object", required: ["a"] } },
      { type: "tool_call", function: "f", arguments: { order: "A-17" } },
      { type: "max_chars", value: 0 },
      { type: "judge", name: "tone", prompt: "judge", version: "staging", pass_score: 0.7 },
      { type: "webhook", endpoint: "whk_0123456789abcdef01234567" },
    ] as const;
    const back = formsToChecks(checks.map((c) => checkToForm(c as never)));
    expect(back).toEqual({ ok: true, checks });
  });

  it("names each problem as the server names it, so it shows beside the same field", () => {
    const bad = [
      { ...blankCheck("contains"), value: "  " },
      { ...blankCheck("json_schema"), schema: "{ nope" },
      { ...blankCheck("tool_call"), function: "f", arguments: "[1]" },
      { ...blankCheck("max_chars"), value: "1.5" },
      { ...blankCheck("judge"), prompt: "j", pass_score: "2" },
      blankCheck("webhook"),
    ];
    const result = formsToChecks(bad);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.field}: ${e.message.replace(/: .*/, "")}`)).toEqual([
      "checks[0].value: is required",
      "checks[1].schema: is not valid JSON",
      "checks[2].arguments: must be a JSON object",
      "checks[3].value: must be a whole number from 0",
      "checks[4].pass_score: must be a number from 0 to 1",
      "checks[5].endpoint: is required",
    ]);
    expect(formsToChecks([])).toEqual({
      ok: false,
      errors: [{ field: "checks", message: "must hold at least one check" }],
    });
  });

  it("names checks as results do, and compares sets whatever the order of their fields", () => {
    expect(
      checkNames([{ type: "contains" }, { type: "contains" }, { type: "json", name: "parses" }, { type: "contains" }]),
    ).toEqual(["contains", "contains#2", "parses", "contains#3"]);
    expect(
      sameChecks(
        [{ type: "contains", value: "a", case_insensitive: true }],
        [{ case_insensitive: true, value: "a", type: "contains" }],
      ),
    ).toBe(true);
    expect(sameChecks([{ type: "contains", value: "a" }], [{ type: "contains", value: "b" }])).toBe(false);
  });
});

const summary = (over: Partial<VersionSummary>): VersionSummary => ({
  ref: "production",
  version: H("a"),
  draft: false,
  model: {},
  settings_hash: H("0"),
  passed: 2,
  failed: 2,
  errored: 0,
  pending: 0,
  pass_rate: 0.5,
  scores: {},
  check_pass_rates: {},
  tokens: { input: 0, output: 0 },
  latency_ms: { p50: null, p95: null },
  ...over,
});

const evaluation = (over: Partial<EvaluationView>): EvaluationView => ({
  id: "ev_1",
  prompt_id: "support",
  status: "done",
  reused: false,
  reused_from: null,
  dataset: { id: "ds_1", version: H("d"), cases: 4 },
  checks_hash: H("c"),
  checks: [],
  check_names: [],
  connection: "con_1",
  concurrency: 4,
  progress: { done: 8, total: 8 },
  versions: [summary({}), summary({ ref: "draft", version: H("b"), draft: true, pass_rate: 0.25 })],
  compare: { regressions: 2, improvements: 1 },
  created_at: "2026-01-01T00:00:00.000Z",
  created_by: null,
  finished_at: null,
  reason: null,
  required_by: null,
  ...over,
});

describe("reading an evaluation", () => {
  it("starts with the draft (else latest) against production, production first", () => {
    const list = { production_version: H("a"), latest_version: H("b") };
    expect(defaultVersions(list, true)).toEqual(["production", "draft"]);
    expect(defaultVersions(list, false)).toEqual(["production", "latest"]);
    expect(defaultVersions({ production_version: H("a"), latest_version: H("a") }, false)).toEqual(["production"]);
    expect(defaultVersions({ production_version: null, latest_version: H("a") }, true)).toEqual(["latest", "draft"]);
    expect(defaultVersions({ production_version: null, latest_version: H("a") }, false)).toEqual(["latest"]);
  });

  it("words versions, rates, latencies and where an evaluation stands", () => {
    expect(versionTitle(summary({ ref: "draft", draft: true }))).toBe("This draft");
    expect(versionTitle(summary({ ref: "1a2b3c4d", version: H("1") }))).toBe("version 1111111");
    expect(versionTitle(summary({ ref: "staging" }))).toBe("staging");
    expect([percent(0.5), percent(2 / 3), percent(null), percent(1)]).toEqual(["50%", "66.7%", "—", "100%"]);
    expect([latency(12.4), latency(1440), latency(null)]).toEqual(["12 ms", "1.4 s", "—"]);
    expect(statusLine(evaluation({ status: "running", progress: { done: 3, total: 8 } }))).toBe(
      "Running: 3 of 8 answers judged.",
    );
    expect(
      statusLine(
        evaluation({
          status: "stopped",
          versions: [summary({ pending: 3 }), summary({ version: H("b"), pending: 5 })],
        }),
      ),
    ).toBe("Stopped with 5 cases not judged. What was judged is kept: running it again asks only the rest.");
    expect(statusLine(evaluation({ reused: true }))).toMatch(/^Reused: /);
    expect(statusLine(evaluation({ status: "failed", reason: "the connection was removed" }))).toBe(
      "Failed: the connection was removed.",
    );
  });

  it("shows regressions first, else improvements, else every case", () => {
    expect(firstFilter(evaluation({}))).toBe("regression");
    expect(firstFilter(evaluation({ compare: { regressions: 0, improvements: 3 } }))).toBe("improvement");
    expect(firstFilter(evaluation({ compare: { regressions: 0, improvements: 0 } }))).toBe("all");
    expect(firstFilter(evaluation({ compare: null }))).toBe("all");
  });
});

describe("the evaluation a release request shows", () => {
  const candidate = H("b");
  const current = H("a");

  it("is the newest that ran both; its counts are from the candidate's side", () => {
    const older = evaluation({ id: "ev_old" });
    const other = evaluation({
      id: "ev_other",
      versions: [summary({ version: H("e") }), summary({ version: H("f") })],
    });
    const found = releaseEvaluation([other, older], candidate, current);
    expect(found?.evaluation.id).toBe("ev_old");
    expect([found?.candidate.pass_rate, found?.current.pass_rate, found?.regressions, found?.improvements]).toEqual([
      0.25, 0.5, 2, 1,
    ]);
    // The candidate first: the evaluation's regressions are the candidate's improvements, and the reverse.
    const flipped = evaluation({
      versions: [summary({ version: candidate }), summary({ version: current })],
      compare: { regressions: 1, improvements: 2 },
    });
    expect(releaseEvaluation([flipped], candidate, current)).toMatchObject({ regressions: 2, improvements: 1 });
  });

  it("a finished evaluation before a newer one that was stopped (or still runs); else the newest of any", () => {
    const stopped = evaluation({ id: "ev_stopped", status: "stopped" });
    const done = evaluation({ id: "ev_done" });
    expect(releaseEvaluation([stopped, done], candidate, current)?.evaluation.id).toBe("ev_done");
    expect(releaseEvaluation([stopped], candidate, current)?.evaluation.id).toBe("ev_stopped");
  });

  it("with more than two versions, no counts (they are against the first, of every other version together)", () => {
    const three = evaluation({
      versions: [summary({ version: current }), summary({ version: candidate }), summary({ version: H("9") })],
    });
    expect(releaseEvaluation([three], candidate, current)).toMatchObject({ regressions: null, improvements: null });
  });

  it("none when no evaluation ran both, or the label serves nothing yet", () => {
    expect(releaseEvaluation([evaluation({})], candidate, null)).toBeNull();
    expect(releaseEvaluation([evaluation({})], H("7"), current)).toBeNull();
    expect(releaseEvaluation([], candidate, current)).toBeNull();
  });
});
