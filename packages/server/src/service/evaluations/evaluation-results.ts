/**
 * What an evaluation found, read back from what is kept by content: per version, the counts, scores, tokens
 * and latency of its cases; per case, the class that the compare view sorts by (regressions first). Read in
 * pages, so a dataset of any size is summed without being held (one byte per case and version is).
 */
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import type {
  CaseClass,
  CaseResultView,
  CellView,
  CheckVerdictView,
  VersionSummary,
} from "@promptstore/core/evaluations/evaluations";
import type { Verdict } from "@promptstore/core/evaluations/verdicts";
import type { AssistantMessage } from "@promptstore/core/playground";
import { quantileSorted } from "simple-statistics";
import type { CellRow, EvaluationRow, EvaluationStore } from "../../store/evaluations/evaluations.js";
import type { EvaluationVersion } from "./evaluation-plan.js";

const PAGE = 500;

/** A cell's state, one byte per case and version. */
export enum CellState {
  Pending = 0,
  Passed = 1,
  Failed = 2,
  Errored = 3,
}

export function cellState(row: Pick<CellRow, "pass" | "error_code">): CellState {
  if (row.pass !== null) return row.pass === 1 ? CellState.Passed : CellState.Failed;
  if (row.error_code !== null) return CellState.Errored;
  return CellState.Pending;
}

/** A case's class against the first version, from its cells' states (the first version's first). */
export function caseClass(states: readonly CellState[]): CaseClass {
  const [first, ...others] = states;
  if (first === CellState.Passed && others.some((s) => s === CellState.Failed || s === CellState.Errored)) {
    return "regression";
  }
  if (first === CellState.Failed && others.some((s) => s === CellState.Passed)) return "improvement";
  if (states.some((s) => s === CellState.Errored)) return "errored";
  if (states.some((s) => s === CellState.Failed)) return "failed";
  if (states.some((s) => s === CellState.Pending)) return "pending";
  return "passed";
}

interface Accumulator {
  /** Per check, the judged cells it passed in. */
  checkPasses: number[];
  passed: number;
  failed: number;
  errored: number;
  pending: number;
  scoreSums: number[];
  scoreCounts: number[];
  input: number;
  output: number;
  latencies: number[];
}

/** A version's sums before its first case: one slot per check. */
function emptyAccumulator(checks: number): Accumulator {
  return {
    checkPasses: Array.from({ length: checks }, () => 0),
    passed: 0,
    failed: 0,
    errored: 0,
    pending: 0,
    scoreSums: Array.from({ length: checks }, () => 0),
    scoreCounts: Array.from({ length: checks }, () => 0),
    input: 0,
    output: 0,
    latencies: [],
  };
}

export interface EvaluationSummary {
  versions: VersionSummary[];
  compare: { regressions: number; improvements: number } | null;
  progress: { done: number; total: number };
}

/** The plan's pieces a summary needs. */
export interface SummaryPlan {
  row: Pick<EvaluationRow, "id" | "project_id" | "dataset_id" | "dataset_version" | "checks_hash" | "case_count">;
  versions: EvaluationVersion[];
  names: string[];
}

export function cellsOf(
  store: EvaluationStore,
  plan: SummaryPlan,
  versionIndex: number,
  after: number,
  limit: number,
  positions?: number[],
) {
  const version = plan.versions[versionIndex] as EvaluationVersion;
  return store.cells(
    { projectId: plan.row.project_id, version: version.version, settingsHash: version.settings_hash },
    plan.row.checks_hash,
    {
      id: plan.row.id,
      datasetId: plan.row.dataset_id,
      datasetVersion: plan.row.dataset_version,
      versionIndex,
    },
    after,
    limit,
    positions,
  );
}

/** Every case's state per version: `states[v][position]`. */
export async function cellStates(store: EvaluationStore, plan: SummaryPlan): Promise<Uint8Array[]> {
  const states: Uint8Array[] = [];
  for (let v = 0; v < plan.versions.length; v++) {
    const bytes = new Uint8Array(plan.row.case_count);
    let after = -1;
    for (;;) {
      const rows = await cellsOf(store, plan, v, after, PAGE);
      for (const row of rows) bytes[row.position] = cellState(row);
      if (rows.length < PAGE) break;
      after = (rows[rows.length - 1] as CellRow).position;
    }
    states.push(bytes);
  }
  return states;
}

export function classes(states: Uint8Array[], count: number): CaseClass[] {
  const out: CaseClass[] = new Array(count);
  for (let p = 0; p < count; p++) out[p] = caseClass(states.map((s) => s[p] as CellState));
  return out;
}

/** Sums every version's cases. */
export async function summarize(store: EvaluationStore, plan: SummaryPlan): Promise<EvaluationSummary> {
  const versions: VersionSummary[] = [];
  const states: Uint8Array[] = [];
  for (let v = 0; v < plan.versions.length; v++) {
    const version = plan.versions[v] as EvaluationVersion;
    const acc = emptyAccumulator(plan.names.length);
    const bytes = new Uint8Array(plan.row.case_count);
    let after = -1;
    let seen = 0;
    for (;;) {
      const rows = await cellsOf(store, plan, v, after, PAGE);
      for (const row of rows) {
        seen++;
        const state = cellState(row);
        bytes[row.position] = state;
        if (state === CellState.Passed) acc.passed++;
        else if (state === CellState.Failed) acc.failed++;
        else if (state === CellState.Errored) acc.errored++;
        else acc.pending++;
        if (row.verdicts !== null) {
          (JSON.parse(row.verdicts) as Verdict[]).forEach((verdict, i) => {
            acc.scoreSums[i] = (acc.scoreSums[i] ?? 0) + verdict.score;
            acc.scoreCounts[i] = (acc.scoreCounts[i] ?? 0) + 1;
            if (verdict.pass) acc.checkPasses[i] = (acc.checkPasses[i] ?? 0) + 1;
          });
        } else if (row.error_detail !== null) {
          // A cell a check could not decide: the checks that did decide still count as passed or not.
          (JSON.parse(row.error_detail) as (Verdict | { error: string })[]).forEach((verdict, i) => {
            if ("pass" in verdict && verdict.pass) acc.checkPasses[i] = (acc.checkPasses[i] ?? 0) + 1;
          });
        }
        if (row.answer !== null) {
          acc.input += row.tokens_in ?? 0;
          acc.output += row.tokens_out ?? 0;
          if (row.latency_ms !== null) acc.latencies.push(row.latency_ms);
        }
      }
      if (rows.length < PAGE) break;
      after = (rows[rows.length - 1] as CellRow).position;
    }
    acc.pending += plan.row.case_count - seen;
    states.push(bytes);
    acc.latencies.sort((a, b) => a - b);
    const judged = acc.passed + acc.failed + acc.errored;
    versions.push({
      ref: version.ref,
      version: version.version,
      draft: version.draft,
      model: version.settings.model,
      settings_hash: version.settings_hash,
      passed: acc.passed,
      failed: acc.failed,
      errored: acc.errored,
      pending: acc.pending,
      pass_rate: judged === 0 ? null : round(acc.passed / judged),
      scores: Object.fromEntries(
        plan.names.map((name, i) => {
          const n = acc.scoreCounts[i] ?? 0;
          return [name, n === 0 ? null : round((acc.scoreSums[i] ?? 0) / n)];
        }),
      ),
      check_pass_rates: Object.fromEntries(
        plan.names.map((name, i) => [name, judged === 0 ? null : round((acc.checkPasses[i] ?? 0) / judged)]),
      ),
      tokens: { input: acc.input, output: acc.output },
      latency_ms: {
        p50: acc.latencies.length === 0 ? null : Math.round(quantileSorted(acc.latencies, 0.5)),
        p95: acc.latencies.length === 0 ? null : Math.round(quantileSorted(acc.latencies, 0.95)),
      },
    });
  }
  let compare: EvaluationSummary["compare"] = null;
  if (plan.versions.length > 1) {
    compare = { regressions: 0, improvements: 0 };
    for (const c of classes(states, plan.row.case_count)) {
      if (c === "regression") compare.regressions++;
      else if (c === "improvement") compare.improvements++;
    }
  }
  const total = plan.row.case_count * plan.versions.length;
  const done = versions.reduce((n, v) => n + v.passed + v.failed + v.errored, 0);
  return { versions, compare, progress: { done, total } };
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

export function cellView(row: CellRow, version: string, names: readonly string[]): CellView {
  const state = cellState(row);
  const decided = row.verdicts ?? row.error_detail;
  const verdicts: CheckVerdictView[] =
    decided === null
      ? []
      : (JSON.parse(decided) as (Verdict | { error: string })[]).map((v, i) =>
          "error" in v
            ? { name: names[i] as string, pass: null, score: null, reason: v.error }
            : { name: names[i] as string, pass: v.pass, score: v.score, reason: v.reason },
        );
  return {
    version,
    state:
      state === CellState.Passed
        ? "passed"
        : state === CellState.Failed
          ? "failed"
          : state === CellState.Errored
            ? "errored"
            : "pending",
    answer: row.answer === null ? null : (JSON.parse(row.answer) as AssistantMessage),
    verdicts,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? "" },
    latency_ms: row.latency_ms,
    tokens: row.answer === null ? null : { input: row.tokens_in ?? 0, output: row.tokens_out ?? 0 },
  };
}

/** Cases at the given positions (in order), each with its cell per version. */
export async function caseViews(
  store: EvaluationStore,
  plan: SummaryPlan,
  positions: number[],
  classOf: (position: number, states: CellState[]) => CaseClass = (_, states) => caseClass(states),
): Promise<CaseResultView[]> {
  if (positions.length === 0) return [];
  const perVersion: Map<number, CellRow>[] = [];
  for (let v = 0; v < plan.versions.length; v++) {
    const rows = await cellsOf(store, plan, v, -1, positions.length, positions);
    perVersion.push(new Map(rows.map((r) => [r.position, r])));
  }
  const out: CaseResultView[] = [];
  for (const position of positions) {
    const first = perVersion[0]?.get(position);
    if (!first) continue;
    const cells = perVersion.map((m) => m.get(position) as CellRow);
    out.push({
      position,
      case_id: first.case_id,
      case: JSON.parse(first.body) as NormalCase,
      class: classOf(position, cells.map(cellState)),
      results: cells.map((row, v) => cellView(row, (plan.versions[v] as EvaluationVersion).version, plan.names)),
    });
  }
  return out;
}

/**
 * The numbers of an evaluation while it runs, summed in the runner's memory as cells are judged (and as the
 * cells judged before are read), and saved with each tick of its lease: reading a running evaluation costs
 * one row, however many cases it has. Its end is summed again from what is kept (`summarize`).
 */
export class LiveSummary {
  private readonly acc: Accumulator[];
  done = 0;

  constructor(private readonly plan: SummaryPlan) {
    this.acc = plan.versions.map(() => emptyAccumulator(plan.names.length));
  }

  /** A cell judged before this run (read from the store), or just now. */
  add(
    v: number,
    cell: {
      state: CellState;
      verdicts: readonly Verdict[] | null;
      tokens: { input: number; output: number } | null;
      latencyMs: number | null;
    },
  ): void {
    const acc = this.acc[v] as Accumulator;
    if (cell.state === CellState.Passed) acc.passed++;
    else if (cell.state === CellState.Failed) acc.failed++;
    else if (cell.state === CellState.Errored) acc.errored++;
    else return;
    this.done++;
    cell.verdicts?.forEach((verdict, i) => {
      acc.scoreSums[i] = (acc.scoreSums[i] ?? 0) + verdict.score;
      acc.scoreCounts[i] = (acc.scoreCounts[i] ?? 0) + 1;
      if (verdict.pass) acc.checkPasses[i] = (acc.checkPasses[i] ?? 0) + 1;
    });
    if (cell.tokens !== null) {
      acc.input += cell.tokens.input;
      acc.output += cell.tokens.output;
    }
    if (cell.latencyMs !== null) acc.latencies.push(cell.latencyMs);
  }

  /** A row read from the store, counted when it was judged already. */
  addKept(v: number, row: CellRow): void {
    const state = cellState(row);
    if (state === CellState.Pending) return;
    this.add(v, {
      state,
      verdicts: row.verdicts === null ? null : (JSON.parse(row.verdicts) as Verdict[]),
      tokens: row.answer === null ? null : { input: row.tokens_in ?? 0, output: row.tokens_out ?? 0 },
      latencyMs: row.answer === null ? null : row.latency_ms,
    });
  }

  summary(): EvaluationSummary {
    const count = this.plan.row.case_count;
    const versions = this.plan.versions.map((version, v) => {
      const acc = this.acc[v] as Accumulator;
      const judged = acc.passed + acc.failed + acc.errored;
      const latencies = [...acc.latencies].sort((a, b) => a - b);
      return {
        ref: version.ref,
        version: version.version,
        draft: version.draft,
        model: version.settings.model,
        settings_hash: version.settings_hash,
        passed: acc.passed,
        failed: acc.failed,
        errored: acc.errored,
        pending: count - judged,
        pass_rate: judged === 0 ? null : round(acc.passed / judged),
        scores: Object.fromEntries(
          this.plan.names.map((name, i) => {
            const n = acc.scoreCounts[i] ?? 0;
            return [name, n === 0 ? null : round((acc.scoreSums[i] ?? 0) / n)];
          }),
        ),
        check_pass_rates: Object.fromEntries(
          this.plan.names.map((name, i) => [name, judged === 0 ? null : round((acc.checkPasses[i] ?? 0) / judged)]),
        ),
        tokens: { input: acc.input, output: acc.output },
        latency_ms: {
          p50: latencies.length === 0 ? null : Math.round(quantileSorted(latencies, 0.5)),
          p95: latencies.length === 0 ? null : Math.round(quantileSorted(latencies, 0.95)),
        },
      };
    });
    return { versions, compare: null, progress: { done: this.done, total: count * this.plan.versions.length } };
  }
}
