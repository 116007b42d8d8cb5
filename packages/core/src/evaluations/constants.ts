/**
 * The evaluations' constants (issue 38), in a module that imports nothing: the dashboard reads them without the
 * schemas' dependencies (node:crypto for case hashing, RE2 for patterns). The schema modules re-export them.
 */
export const DATASET_LIMITS = {
  /** One case's canonical JSON, in UTF-8 bytes. */
  caseBytes: 100 * 1024,
  /** Cases in one request body (create, replace, append); more go in later requests or an import. */
  casesPerRequest: 1000,
  expectedLength: 100_000,
  tagsPerCase: 20,
  tagLength: 100,
  nameLength: 200,
  descriptionLength: 2000,
  messageLength: 500,
} as const;

export const CHECK_LIMITS = {
  checksPerSet: 20,
  nameLength: 100,
  textLength: 100_000,
  patternLength: 1000,
  schemaLength: 100_000,
} as const;

export const CHECK_TYPES = [
  "equals",
  "contains",
  "not_contains",
  "regex",
  "json",
  "json_schema",
  "tool_call",
  "max_chars",
  "expected",
  "judge",
  "webhook",
] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

export const DATASET_PAGE = { default: 100, max: 1000 } as const;

/** CSV columns that are not variables. */
export const CSV_RESERVED_COLUMNS = ["expected", "tags", "messages"] as const;

/** How a CSV cell holds several tags. */
export const CSV_TAG_SEPARATOR = "|";

export const EVALUATION_LIMITS = {
  versions: 4,
  defaultConcurrency: 4,
  maxConcurrency: 32,
  /** Cases in one page of an evaluation's results. */
  casesPage: 50,
  maxCasesPage: 200,
} as const;

export const EVALUATION_STATUSES = ["running", "done", "failed", "stopped"] as const;
export type EvaluationStatus = (typeof EVALUATION_STATUSES)[number];

/** How a case fares against the first version: the compare view puts regressions first. */
export const CASE_CLASSES = ["regression", "improvement", "errored", "failed", "passed", "pending"] as const;
export type CaseClass = (typeof CASE_CLASSES)[number];
