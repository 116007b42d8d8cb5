/**
 * Row types of the evaluations' tables, as Kysely sees them (migration 021 on). Part of the Database in
 * ../schema.ts, which re-exports them.
 */
import type { Generated } from "kysely";

/** Evaluations (migration 021, docs/evaluations.md). */
export interface DatasetsTable {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  head: string | null;
  created_at: string;
  updated_at: string;
}
export interface DatasetVersionsTable {
  dataset_id: string;
  hash: string;
  case_count: number;
  parent: string | null;
  message: string | null;
  created_at: string;
  created_by: string | null;
}
export interface DatasetCasesTable {
  dataset_id: string;
  case_id: string;
  /** The case's canonical JSON. */
  body: string;
}
export interface DatasetVersionCasesTable {
  dataset_id: string;
  version: string;
  position: number;
  case_id: string;
}
export interface EvaluationsTable {
  id: string;
  project_id: string;
  prompt_id: string;
  status: string;
  content_key: string;
  reused: number;
  dataset_id: string;
  dataset_version: string;
  case_count: number;
  checks_hash: string;
  /** JSON: the check set, judges pinned. */
  checks: string;
  /** JSON array: per version { ref, version, draft?, settings, settings_hash }. */
  versions: string;
  connection_id: string;
  concurrency: number;
  created_at: string;
  created_by: string | null;
  finished_at: string | null;
  reason: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  stop_requested: Generated<number>;
  /** JSON: per-version summary. */
  summary: string | null;
  /** Migration 023: run for a label's required evaluation: the label, the requirement's hash then, the candidate. */
  requirement_label: string | null;
  requirement_hash: string | null;
  candidate: string | null;
}
export interface EvaluationAnswersTable {
  project_id: string;
  version: string;
  settings_hash: string;
  case_id: string;
  /** JSON: the assistant message. */
  answer: string;
  finish_reason: string | null;
  tokens_in: number | null;
  tokens_out: number | null;
  latency_ms: number;
  created_at: string;
}
export interface EvaluationVerdictsTable {
  project_id: string;
  version: string;
  settings_hash: string;
  checks_hash: string;
  case_id: string;
  pass: number;
  /** JSON array in the check set's order: { pass, score, reason }. */
  verdicts: string;
  created_at: string;
}
export interface EvaluationErrorsTable {
  evaluation_id: string;
  version_index: number;
  case_id: string;
  code: string;
  message: string;
  /** JSON: the verdicts of the checks that decided, or null. */
  detail: string | null;
}

/** A prompt's evaluation defaults (migration 022, docs/evaluations.md "Default checks"). */
export interface EvaluationDefaultsTable {
  project_id: string;
  prompt_id: string;
  /** JSON: the check set. */
  checks: string;
  dataset_id: string | null;
  updated_at: string;
  updated_by: string | null;
}
