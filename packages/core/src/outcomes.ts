/**
 * Production outcomes and the fleet (docs/outcomes.md): what an application reports about the answers a
 * prompt's versions gave, what the server answers, and the numbers it reads back. Shared by the server's
 * routes, its OpenAPI document and the dashboard; the clients keep their own copies.
 */
import { z } from "zod";
import { LABEL_NAME } from "./labels.js";
import { PROMPT_ID_PATTERN } from "./prompts/slug.js";
import { text } from "./text.js";
import { FULL_HASH } from "./version-ref.js";

export const OUTCOME_LIMITS = {
  /** Outcomes in one `POST /api/v2/outcomes`. */
  perBatch: 1000,
  /** A report's `latency_ms`: an hour. */
  latencyMs: 3_600_000,
  /** Tokens of one answer, each way. */
  tokens: 100_000_000,
  /** Tags on one outcome, and the length of a tag's key and value. */
  tags: 10,
  tagKeyLength: 100,
  tagValueLength: 200,
  /** How far in the future an outcome's `at` may be (clocks differ), in milliseconds. */
  futureMs: 5 * 60_000,
  /** An instance's id, its SDK's name, and the prompts it says it serves. */
  instanceIdLength: 100,
  sdkLength: 100,
  serving: 1000,
} as const;

/** The arms of a rollout, as a read names them. */
export const OUTCOME_ARMS = ["candidate", "current"] as const;
export type OutcomeArm = (typeof OUTCOME_ARMS)[number];

/** How `GET /api/v2/prompts/:id/outcomes` groups: per version, per version and label, per version, label and arm. */
export const OUTCOME_GROUPINGS = ["version", "label", "arm"] as const;
export const OUTCOME_STEPS = ["minute", "hour"] as const;
export type OutcomeGrouping = (typeof OUTCOME_GROUPINGS)[number];
export type OutcomeStep = (typeof OUTCOME_STEPS)[number];

const FULL_HASH_MESSAGE = "must be a version's full hash: 64 lowercase hex characters";
const fullHash = text().regex(FULL_HASH, FULL_HASH_MESSAGE);
const promptRef = text().regex(PROMPT_ID_PATTERN, "must be a prompt's id").describe("The prompt's id");
/** A label as a read names it; `latest` too, which is taken as no label (a read by latest or by version). */
const labelRef = text().regex(LABEL_NAME, "must be a label's name (or latest)");
const isoTime = z.iso.datetime({ offset: true, message: "must be an ISO 8601 timestamp" });

const tokens = z
  .strictObject({
    input: z.number().int().min(0).max(OUTCOME_LIMITS.tokens).optional().describe("Prompt tokens"),
    output: z.number().int().min(0).max(OUTCOME_LIMITS.tokens).optional().describe("Completion tokens"),
  })
  .describe("The answer's tokens, each a whole number from 0");

const tags = z
  .record(
    text().min(1).max(OUTCOME_LIMITS.tagKeyLength),
    text().max(OUTCOME_LIMITS.tagValueLength, `must be at most ${OUTCOME_LIMITS.tagValueLength} characters`),
  )
  .refine((value) => Object.keys(value).length <= OUTCOME_LIMITS.tags, {
    message: `must have at most ${OUTCOME_LIMITS.tags} entries`,
  })
  .describe("Up to 10 string pairs: checked, not stored (aggregates keep no per-outcome detail)");

/** One outcome: how one answer of one read went. */
export const outcomeInput = z.strictObject({
  prompt: promptRef,
  version: fullHash.describe("The full hash the read returned"),
  label: labelRef.optional().describe("The label the read asked for and got; absent for a read by version or latest"),
  arm: z.enum(OUTCOME_ARMS).optional().describe("The rollout arm the read answered, when the label had a rollout"),
  ok: z.boolean().describe("Whether the application could use the answer (parsed, not refused, no error)"),
  latency_ms: z
    .number()
    .min(0)
    .max(OUTCOME_LIMITS.latencyMs)
    .optional()
    .describe("How long the answer took, in milliseconds (0 to 3 600 000)"),
  score: z.number().min(0).max(1).optional().describe("A user's feedback or an online check, 0 to 1"),
  tokens: tokens.optional(),
  tags: tags.optional(),
  at: isoTime
    .optional()
    .describe(
      "When the answer came (default: when the server receives it); refused over 5 minutes ahead or older than the retention",
    ),
});
export type OutcomeInput = z.infer<typeof outcomeInput>;

/** What a running client instance serves: per prompt and label, the hash it holds. */
export const instanceReport = z.strictObject({
  id: text()
    .min(1, "must not be empty")
    .max(OUTCOME_LIMITS.instanceIdLength, `must be at most ${OUTCOME_LIMITS.instanceIdLength} characters`)
    .describe("The client instance's own random id (a UUID), the same for its whole life"),
  sdk: text()
    .max(OUTCOME_LIMITS.sdkLength, `must be at most ${OUTCOME_LIMITS.sdkLength} characters`)
    .optional()
    .describe("The client's name and version, like typescript/1.2.0"),
  serving: z
    .array(
      z.strictObject({
        prompt: promptRef,
        label: labelRef.optional().describe("The label held; absent for a prompt held by version or latest"),
        version: fullHash.describe("The full hash held"),
      }),
    )
    .max(OUTCOME_LIMITS.serving, `must have at most ${OUTCOME_LIMITS.serving} items`)
    .optional()
    .describe("What it holds now, per prompt and label (none: nothing yet)"),
});
export type InstanceReport = z.infer<typeof instanceReport>;

/** `POST /api/v2/outcomes`. */
export const outcomesBody = z.strictObject({
  outcomes: z
    .array(outcomeInput)
    .max(OUTCOME_LIMITS.perBatch, `at most ${OUTCOME_LIMITS.perBatch} a batch`)
    .describe("0 to 1000 outcomes"),
  instance: instanceReport.optional().describe("The fleet report of the client instance sending the batch"),
});
export type OutcomesBody = z.infer<typeof outcomesBody>;

/** One outcome the server could not place: never stored. */
export const refusedOutcome = z.strictObject({
  index: z.number().int().min(0).describe("Its place in `outcomes`"),
  field: text().describe("The field that could not be placed, like outcomes[3].version"),
  message: text(),
});

export const outcomesAnswer = z.strictObject({
  accepted: z.number().int().min(0).describe("Outcomes taken (written within a second)"),
  refused: z.array(refusedOutcome),
});
export type OutcomesAnswer = z.infer<typeof outcomesAnswer>;

/** `GET /api/v2/prompts/:id/outcomes`. */
export const outcomesQuery = z.strictObject({
  from: isoTime.optional().describe("The start (default: 24 hours before `to`), rounded down to the step"),
  to: isoTime.optional().describe("The end, not included (default: now)"),
  by: z.enum(OUTCOME_GROUPINGS).optional().describe("One series per version (default), per label too, or per arm too"),
  label: labelRef.optional().describe("Only outcomes of reads of this label"),
  step: z
    .enum(OUTCOME_STEPS)
    .optional()
    .describe(
      "Points a minute or an hour apart (default: minute up to 6 hours, else hour; hour over data older than a day)",
    ),
});
export type OutcomesQuery = z.infer<typeof outcomesQuery>;

const count = z.number().int().min(0);

export const outcomeNumbers = z.strictObject({
  count: count.describe("Outcomes reported"),
  ok: count.describe("Of those, ok"),
  ok_rate: z.number().nullable().describe("ok / count; null when none"),
  score_mean: z.number().nullable().describe("The mean score of those with one; null when none had one"),
  score_count: count.describe("Outcomes with a score"),
  latency_p50: z.number().nullable().describe("Median latency in ms, from the histogram; null when none had one"),
  latency_p95: z.number().nullable().describe("95th percentile latency in ms, from the histogram"),
  tokens_input: count,
  tokens_output: count,
});
export type OutcomeNumbers = z.infer<typeof outcomeNumbers>;

export const outcomeSeries = z.strictObject({
  version: text(),
  label: text().nullable().describe("null: every label together (by=version), or reads by version or latest"),
  arm: z.enum(OUTCOME_ARMS).nullable().describe("null: both arms together (by=version|label), or no rollout"),
  totals: outcomeNumbers,
  points: z.array(outcomeNumbers.extend({ at: text().describe("The step's start (ISO 8601, UTC)") })),
});

export const outcomesView = z.strictObject({
  prompt: text(),
  from: text(),
  to: text(),
  step: z.enum(OUTCOME_STEPS),
  by: z.enum(OUTCOME_GROUPINGS),
  series: z.array(outcomeSeries).describe("Most outcomes first; only series with outcomes in the range"),
});
export type OutcomesView = z.infer<typeof outcomesView>;

/** `GET /api/v2/prompts/:id/fleet`. */
export const fleetView = z.strictObject({
  prompt: text(),
  window_seconds: z.number().int(),
  serving: z
    .array(
      z.strictObject({
        label: text().nullable().describe("null: held by version or latest"),
        version: text(),
        instances: count,
        last_seen: text().describe("The latest report of any of them (ISO 8601, UTC)"),
      }),
    )
    .describe("Per label and version, most instances first"),
  instances: count.describe("Instances that reported on this prompt within the window"),
});
export type FleetView = z.infer<typeof fleetView>;
