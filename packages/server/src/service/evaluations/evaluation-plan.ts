/**
 * What an evaluation runs, as its row keeps it: each version with the text, tools and settings it is sent with
 * (a draft's too, which no version row holds), and the check set pinned. An instance that takes a lapsed
 * evaluation over runs it from this alone.
 */
import type { RunSettings } from "@promptstore/core/playground";
import type { EvaluationRow } from "../../store/evaluations/evaluations.js";
import type { RunTarget } from "../playground/run-service.js";
import type { PinnedCheck } from "./check-runner.js";

export interface EvaluationVersion {
  /** As the request named it: a reference, or `draft`. */
  ref: string;
  version: string;
  draft: boolean;
  settings: RunSettings;
  settings_hash: string;
  target: RunTarget;
}

/** A check set as it runs: judges and webhooks pinned, named, hashed (the check runner's `PreparedChecks`). */
export interface PinnedChecks {
  checks: PinnedCheck[];
  names: string[];
  hash: string;
}

export interface EvaluationPlan {
  row: EvaluationRow;
  versions: EvaluationVersion[];
  checks: PinnedChecks;
  names: string[];
}

export function planOf(row: EvaluationRow): EvaluationPlan {
  const versions = JSON.parse(row.versions) as EvaluationVersion[];
  const checks = JSON.parse(row.checks) as PinnedChecks;
  return { row, versions, checks, names: checks.names };
}
