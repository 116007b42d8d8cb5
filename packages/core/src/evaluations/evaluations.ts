/**
 * An evaluation (issue 38, docs/evaluations.md): one to four versions of a prompt run over a dataset version,
 * every answer judged by a check set. What starting one takes, and what reading one answers.
 */
import { z } from "zod";
import { type AssistantMessage, connectionRef, draftContent } from "../playground.js";
import { type ModelSettings, modelOverride } from "../run-settings.js";
import { versionRef } from "../schemas.js";
import { text } from "../text.js";
import type { NormalCase } from "./cases.js";
import { type Check, checkSet } from "./checks.js";
import { CASE_CLASSES, type CaseClass, EVALUATION_LIMITS, type EvaluationStatus } from "./constants.js";

export {
  CASE_CLASSES,
  type CaseClass,
  EVALUATION_LIMITS,
  EVALUATION_STATUSES,
  type EvaluationStatus,
} from "./constants.js";

export const DATASET_ID = /^ds_[0-9a-f]{24}$/;
export const EVALUATION_ID = /^ev_[0-9a-f]{24}$/;

/** A dataset by id (its newest version) or pinned: `<id>@<version hash or prefix of 7+>`. */
export const datasetRef = text().regex(
  /^ds_[0-9a-f]{24}(@[0-9a-f]{7,64})?$/,
  "must be a dataset id (ds_…), optionally with @<version>",
);

/** A version to evaluate: any reference a read takes, or an unsaved draft (answered under the hash it would save as). */
export const evaluatedVersion = z.union([versionRef, z.strictObject({ draft: draftContent })], {
  error: "must be a version reference (a hash, a prefix, latest or a label) or { draft }",
});

export const startEvaluationBody = z.strictObject({
  versions: z
    .array(evaluatedVersion)
    .min(1, `must name one to ${EVALUATION_LIMITS.versions} versions`)
    .max(EVALUATION_LIMITS.versions, `must name one to ${EVALUATION_LIMITS.versions} versions`),
  dataset: datasetRef,
  checks: checkSet,
  connection: connectionRef,
  model: modelOverride.optional(),
  guard: z.boolean().optional(),
  concurrency: z
    .number()
    .int("must be a whole number")
    .min(1, `must be 1 to ${EVALUATION_LIMITS.maxConcurrency}`)
    .max(EVALUATION_LIMITS.maxConcurrency, `must be 1 to ${EVALUATION_LIMITS.maxConcurrency}`)
    .optional(),
});
export type StartEvaluationBody = z.infer<typeof startEvaluationBody>;

export const casesQuery = z.strictObject({
  after: z.coerce.number().int().min(-1).optional(),
  limit: z.coerce.number().int().min(1).max(EVALUATION_LIMITS.maxCasesPage).optional(),
  only: z.enum(["all", ...CASE_CLASSES, "changed"]).optional(),
});

export interface VersionSummary {
  /** As it was named: a reference, or `draft`. */
  ref: string;
  version: string;
  draft: boolean;
  model: Partial<ModelSettings>;
  settings_hash: string;
  passed: number;
  failed: number;
  errored: number;
  /** Cases not yet judged (while running, or left by a stop). */
  pending: number;
  /** passed / (passed + failed + errored); null before any case is judged. */
  pass_rate: number | null;
  /** Per check name, the mean score over the cases it judged; null when it judged none. */
  scores: Record<string, number | null>;
  /** Per check name, the share of judged cases (errored included) on which it passed; null before any. */
  check_pass_rates: Record<string, number | null>;
  tokens: { input: number; output: number };
  latency_ms: { p50: number | null; p95: number | null };
}

export interface EvaluationView {
  id: string;
  prompt_id: string;
  status: EvaluationStatus;
  /** Every answer and verdict was already kept: nothing was sent to the provider. */
  reused: boolean;
  /** The earlier evaluation of the same content that this one repeats, when reused. */
  reused_from: string | null;
  dataset: { id: string; version: string; cases: number };
  checks_hash: string;
  checks: Check[];
  check_names: string[];
  connection: string;
  concurrency: number;
  progress: { done: number; total: number };
  versions: VersionSummary[];
  /** Against the first version: cases that pass there and fail on another (regressions), and the reverse. */
  compare: { regressions: number; improvements: number } | null;
  created_at: string;
  created_by: string | null;
  finished_at: string | null;
  reason: string | null;
  /** Run for a label's required evaluation: the label (null otherwise). */
  required_by: string | null;
}

export interface CheckVerdictView {
  name: string;
  pass: boolean | null;
  score: number | null;
  reason: string;
}

export interface CellView {
  version: string;
  state: "passed" | "failed" | "errored" | "pending";
  answer: AssistantMessage | null;
  verdicts: CheckVerdictView[];
  error: { code: string; message: string } | null;
  latency_ms: number | null;
  tokens: { input: number; output: number } | null;
}

export interface CaseResultView {
  position: number;
  case_id: string;
  case: NormalCase;
  class: CaseClass;
  results: CellView[];
}

/**
 * `PUT …/prompts/:id/evaluation-defaults` (docs/evaluations.md, "Default checks"): the check set an evaluation of
 * the prompt starts from, and optionally the dataset it picks (by id: its newest version when one starts).
 */
export const evaluationDefaultsBody = z.strictObject({
  checks: checkSet,
  dataset: text()
    .regex(DATASET_ID, "must be a dataset id (ds_ and 24 hex characters)")
    .nullable()
    .optional()
    .describe("A dataset of the project, or null for none"),
});
export type EvaluationDefaultsBody = z.infer<typeof evaluationDefaultsBody>;

/** A prompt's evaluation defaults; `checks` null when none were saved. */
export interface EvaluationDefaultsView {
  prompt_id: string;
  checks: Check[] | null;
  /** A dataset of the project, or null (none chosen, or the one chosen was deleted since). */
  dataset: string | null;
  updated_at: string | null;
  updated_by: string | null;
}
