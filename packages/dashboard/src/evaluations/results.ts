/**
 * How the Evaluate screen and the release request read an evaluation: the versions picked by default, each
 * version's title and numbers in words, the filter shown first, and the evaluation a release request shows.
 * Pure, so it is unit-tested.
 */
import type { EvaluationView, VersionSummary } from "@promptstore/core/evaluations/evaluations";
import type { VersionList } from "@promptstore/core/views";
import type { CaseFilter } from "../api/evaluation-queries";
import { shortHash } from "../ui/format";

/** What the editor holds (`draft`) or a version reference. */
export const DRAFT = "draft";

/**
 * The versions an evaluation starts with: the draft if the editor holds an unsaved one, else latest, against
 * production, which comes first (regressions and improvements are counted against the first version). When
 * production is latest and there is no draft, or nothing is published, one version.
 */
export function defaultVersions(
  list: Pick<VersionList, "production_version" | "latest_version">,
  hasDraft: boolean,
): string[] {
  const candidate = hasDraft ? DRAFT : "latest";
  if (list.production_version === null) return hasDraft ? ["latest", DRAFT] : ["latest"];
  if (!hasDraft && list.production_version === list.latest_version) return ["production"];
  return ["production", candidate];
}

/** A version's column heading: "production", "This draft", "latest", a label, or "version 1a2b3c4". */
export function versionTitle(v: Pick<VersionSummary, "ref" | "version" | "draft">): string {
  if (v.draft) return "This draft";
  if (/^[0-9a-f]{7,64}$/.test(v.ref)) return `version ${shortHash(v.version)}`;
  return v.ref;
}

/** "50%", "66.7%", "—" before any case is judged. */
export function percent(rate: number | null): string {
  if (rate === null) return "—";
  const value = Math.round(rate * 1000) / 10;
  return `${value}%`;
}

/** A mean score: "0.75", "—" when the check judged no case. */
export function score(mean: number | null): string {
  if (mean === null) return "—";
  return String(Math.round(mean * 100) / 100);
}

/** "12 ms", "1.4 s", "—". */
export function latency(ms: number | null): string {
  if (ms === null) return "—";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}

/** What the results table shows first: the regressions when there are any, else the improvements, else all. */
export function firstFilter(view: Pick<EvaluationView, "compare">): CaseFilter {
  if (view.compare && view.compare.regressions > 0) return "regression";
  if (view.compare && view.compare.improvements > 0) return "improvement";
  return "all";
}

/** Where an evaluation stands, in a sentence for its banner. */
export function statusLine(view: EvaluationView): string {
  const { done, total } = view.progress;
  switch (view.status) {
    case "running":
      return `Running: ${done} of ${total} answers judged.`;
    case "stopped": {
      const pending = Math.max(0, ...view.versions.map((v) => v.pending));
      return pending > 0
        ? `Stopped with ${pending} ${pending === 1 ? "case" : "cases"} not judged. What was judged is kept: running it again asks only the rest.`
        : "Stopped after every case was judged.";
    }
    case "failed":
      return `Failed: ${view.reason ?? "the server gave no reason"}.`;
    case "done":
      return view.reused
        ? "Reused: these versions, this dataset version and these checks were evaluated before, so nothing was sent to the model."
        : `Done: ${total} answers judged.`;
  }
}

export interface ReleaseEvaluation {
  evaluation: EvaluationView;
  candidate: VersionSummary;
  current: VersionSummary;
  /**
   * Cases the current version passes and the candidate fails (and the reverse), when the evaluation compared
   * exactly these two; with more versions, the counts are against its first version and not shown as these.
   */
  regressions: number | null;
  improvements: number | null;
}

/**
 * The newest evaluation of the prompt that ran both the candidate and the version the label serves now, as the
 * release request shows it: the newest that finished (`done`), else the newest of any status (one running,
 * stopped or failed says less, but something); null when there is none (or the label serves nothing yet).
 * `evaluations` are newest first, as the API lists them.
 */
export function releaseEvaluation(
  evaluations: readonly EvaluationView[],
  candidate: string,
  current: string | null,
): ReleaseEvaluation | null {
  if (current === null || current === candidate) return null;
  const ordered = [
    ...evaluations.filter((e) => e.status === "done"),
    ...evaluations.filter((e) => e.status !== "done"),
  ];
  for (const evaluation of ordered) {
    const c = evaluation.versions.find((v) => v.version === candidate);
    const p = evaluation.versions.find((v) => v.version === current);
    if (!c || !p) continue;
    let regressions: number | null = null;
    let improvements: number | null = null;
    if (evaluation.compare && evaluation.versions.length === 2) {
      const currentFirst = evaluation.versions[0]?.version === current;
      regressions = currentFirst ? evaluation.compare.regressions : evaluation.compare.improvements;
      improvements = currentFirst ? evaluation.compare.improvements : evaluation.compare.regressions;
    }
    return { evaluation, candidate: c, current: p, regressions, improvements };
  }
  return null;
}
