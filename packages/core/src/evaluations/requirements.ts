/**
 * A label's required evaluation (issue 39, docs/evaluations.md "Required evaluations"): what a version must
 * pass before the label points to it. A dataset (following its newest version, or pinned), a check set, a
 * connection and model settings, and thresholds.
 */
import { z } from "zod";
import { connectionRef } from "../playground.js";
import { modelOverride } from "../run-settings.js";
import { labelSettingsBody } from "../schemas.js";
import { text } from "../text.js";
import { checkSet } from "./checks.js";
import { datasetRef } from "./evaluations.js";

const rate = z.number().min(0, "must be 0 to 1").max(1, "must be 0 to 1");

export const requirementBody = z.strictObject({
  dataset: datasetRef.describe("The dataset: `<id>` follows its newest version, `<id>@<version>` pins one"),
  checks: checkSet,
  connection: connectionRef,
  model: modelOverride.optional(),
  guard: z.boolean().optional(),
  /** The least share of cases that pass every check. */
  min_pass_rate: rate,
  /** Per check name, the least share of cases that pass that check. */
  min_check_pass_rates: z.record(text().min(1).max(100), rate).optional(),
  /** No case that passes on the label's current version may fail (or error) on the candidate. */
  no_regression: z.boolean().optional(),
});
export type RequirementBody = z.infer<typeof requirementBody>;

/** A label's settings with its required evaluation (owners; the dashboard and the operator's CLI). */
export const labelSettingsWithRequirement = labelSettingsBody.extend({
  required_evaluation: requirementBody
    .nullable()
    .optional()
    .describe("What a version must pass before this label points to it; null for none (docs/evaluations.md)"),
  rollback_allowed: z
    .boolean()
    .optional()
    .describe("A rollback to a version this label served before passes its required evaluation (default true)"),
});

/** What a requirement says of one candidate version. */
export type GateState =
  | { state: "passed"; evaluation: string | null; pass_rate: number | null; rollback?: true }
  | { state: "not_evaluated"; reason: string; evaluation?: string }
  | { state: "failed"; reason: string; pass_rate: number | null; evaluation: string }
  | { state: "stale"; reason: string; evaluation: string };
