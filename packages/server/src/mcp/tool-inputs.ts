/** MCP tool inputs, composed from the schemas the REST API validates with. */

import {
  casesQuery,
  EVALUATION_ID,
  EVALUATION_LIMITS,
  startEvaluationBody,
} from "@promptstore/core/evaluations/evaluations";
import { modelOverride } from "@promptstore/core/run-settings";
import {
  createPromptFields,
  exactlyOneContentForm,
  listQuery,
  promptId,
  publishBody,
  publishRef,
  readQuery,
  releaseRequestBody,
  saveVersionFields,
  updateIncludesBody,
  versionRef,
} from "@promptstore/core/schemas";
import { text } from "@promptstore/core/text";
import { z } from "zod";

const id = promptId.describe("The prompt id (slug)");

export const listPromptsInput = z.strictObject({
  limit: listQuery.shape.limit,
  cursor: listQuery.shape.cursor,
});

export const getPromptInput = z.strictObject({
  id,
  version: versionRef
    .optional()
    .describe("production (default), latest, a label such as staging, a version hash or a 7+ character prefix"),
  guard: z.boolean().optional().describe("Append the anti-injection guard (default true)"),
  assign: readQuery.shape.assign,
});

export const createPromptInput = createPromptFields.superRefine(exactlyOneContentForm);

export const saveVersionInput = saveVersionFields.extend({ id }).superRefine(exactlyOneContentForm);

export const publishInput = z.strictObject({
  id,
  version: publishRef.optional().describe("latest (default), a version hash or a 7+ character prefix"),
  label: publishBody.shape.label,
  percent: publishBody.shape.percent,
});

export const requestReleaseInput = releaseRequestBody.extend({ id });

export const listVersionsInput = z.strictObject({ id });

export const listIncludesInput = z.strictObject({
  id,
  version: versionRef
    .optional()
    .describe("The version whose includes are listed: production (default), latest, a label, a hash or prefix"),
});

export const listIncludedByInput = z.strictObject({ id });

export const updateIncludesInput = updateIncludesBody.extend({
  id: promptId.describe("The prompt whose includes are updated (the one that includes the others)"),
});

export const deletePromptInput = z.strictObject({
  id: promptId.describe("The id (slug) of the prompt to delete, with all its versions; this cannot be undone"),
});

const evaluated = startEvaluationBody.shape;
const override = modelOverride.shape;

/** `POST /api/v2/prompts/{id}/evaluations`'s body and the prompt's id, every field described for the model. */
export const runEvaluationInput = startEvaluationBody.extend({
  id: promptId.describe("The id (slug) of the prompt whose versions are evaluated"),
  versions: evaluated.versions.describe(
    "One to four versions, each different: a hash, a prefix of 7+ characters, latest, a label such as production, or { draft: { sections | markdown, tools?, model? } } (unsaved content); the first is the one the others are compared with",
  ),
  dataset: evaluated.dataset.describe(
    "The dataset's id (ds_…; list_datasets): its newest version; or <id>@<version hash or prefix> to pin one",
  ),
  checks: evaluated.checks.describe(
    "What a good answer is, every check judging each answer: { type, name?, ...params } with type equals, contains, not_contains, regex, json, json_schema, tool_call, max_chars, expected (the case's expected answer), judge ({ prompt, version? }: a prompt of the store grades it) or webhook ({ endpoint: whk_… })",
  ),
  connection: evaluated.connection.describe("The model connection (con_…) whose provider answers"),
  model: modelOverride
    .extend({
      name: override.name.describe("The model's name; else the versions' own, else the connection's first model"),
      temperature: override.temperature.describe("Sampling temperature, 0 to 2"),
      top_p: override.top_p.describe("Nucleus sampling, 0 to 1"),
      max_output_tokens: override.max_output_tokens.describe("The most tokens an answer may have"),
      stop: override.stop.describe("Up to 4 sequences at which the model stops"),
      response_format: override.response_format,
      extra: override.extra,
    })
    .optional()
    .describe("Overrides the versions' model settings, key by key, as a playground run's does"),
  guard: evaluated.guard.describe("Put the guard text before the prompt, as reads do (default true)"),
  concurrency: evaluated.concurrency.describe("Model calls at once for this evaluation, 1 to 32 (default 4)"),
});

const position = z
  .number({ error: "must be a case's position (a whole number from -1)" })
  .int("must be a case's position (a whole number from -1)")
  .min(-1, "must be a case's position (a whole number from -1)");

export const getEvaluationInput = z.strictObject({
  id: text()
    .regex(EVALUATION_ID, "must be an evaluation id (ev_ and 24 hex characters)")
    .describe("The evaluation's id (ev_…), as run_evaluation answered it"),
  only: casesQuery.shape.only.describe(
    "Keep one class of cases: regression and improvement (against the first version), changed (both), errored, failed, passed, pending; all by default",
  ),
  after: position.optional().describe("The `next` of the previous page of cases"),
  limit: z
    .number({ error: `must be a whole number from 1 to ${EVALUATION_LIMITS.maxCasesPage}` })
    .int(`must be a whole number from 1 to ${EVALUATION_LIMITS.maxCasesPage}`)
    .min(1, `must be a whole number from 1 to ${EVALUATION_LIMITS.maxCasesPage}`)
    .max(EVALUATION_LIMITS.maxCasesPage, `must be a whole number from 1 to ${EVALUATION_LIMITS.maxCasesPage}`)
    .optional()
    .describe(`Cases in the page, 1-${EVALUATION_LIMITS.maxCasesPage} (default ${EVALUATION_LIMITS.casesPage})`),
});

export const listDatasetsInput = z.strictObject({});
