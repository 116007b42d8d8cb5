/**
 * The datasets' request shapes (issue 38, docs/evaluations.md "Datasets"): the REST API's and the dashboard's
 * bodies and queries, from which the OpenAPI document is built too.
 */
import { z } from "zod";
import { promptId } from "../schemas.js";
import { text } from "../text.js";
import { FULL_HASH, HASH_OR_PREFIX } from "../version-ref.js";
import { DATASET_LIMITS, datasetCase, datasetName } from "./cases.js";
import { DATASET_PAGE } from "./constants.js";

export { CSV_RESERVED_COLUMNS, CSV_TAG_SEPARATOR, DATASET_PAGE } from "./constants.js";

/** A dataset's id: `ds_` and 24 hex characters. */
export const DATASET_ID = /^ds_[0-9a-f]{24}$/;

export const datasetDescription = text()
  .max(DATASET_LIMITS.descriptionLength, `must be at most ${DATASET_LIMITS.descriptionLength} characters`)
  .describe("What the dataset is for");

export const datasetMessage = text()
  .max(DATASET_LIMITS.messageLength, `must be at most ${DATASET_LIMITS.messageLength} characters`)
  .describe("A change note kept with the version");

const caseList = z
  .array(datasetCase)
  .max(
    DATASET_LIMITS.casesPerRequest,
    `must hold at most ${DATASET_LIMITS.casesPerRequest} cases; send more with POST /api/v2/datasets/{id}/cases or an import`,
  );

const baseVersion = text()
  .regex(FULL_HASH, "must be the full 64-character hash of a dataset version")
  .describe("The head this change started from; if the head has moved since, the change is refused (409)");

/** A version given by its hash or a unique prefix of 7+ characters. */
export const datasetVersionRef = text()
  .regex(HASH_OR_PREFIX, "must be 7-64 lowercase hex characters of a dataset version hash")
  .describe("A dataset version: its full hash or a unique prefix of 7+ characters");

/** `POST /api/v2/datasets`: with its first cases, or from a prompt's saved examples. */
export const createDatasetBody = z
  .strictObject({
    name: datasetName.describe("Unique in the project"),
    description: datasetDescription.optional(),
    cases: caseList.optional().describe("The first version's cases, in order (may be empty)"),
    from_examples: promptId
      .optional()
      .describe("A prompt whose saved examples become the cases: variables, messages, good answer as expected"),
    message: datasetMessage.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.cases === undefined && body.from_examples === undefined) {
      ctx.addIssue({ code: "custom", path: ["cases"], message: "required (or from_examples)" });
    }
    if (body.cases !== undefined && body.from_examples !== undefined) {
      ctx.addIssue({ code: "custom", path: ["from_examples"], message: "give cases or from_examples, not both" });
    }
  });
export type CreateDatasetBody = z.infer<typeof createDatasetBody>;

/** `PUT /api/v2/datasets/:id`: a new version holding exactly these cases. */
export const replaceCasesBody = z.strictObject({
  cases: caseList,
  message: datasetMessage.optional(),
  base: baseVersion.optional(),
});
export type ReplaceCasesBody = z.infer<typeof replaceCasesBody>;

/** `POST /api/v2/datasets/:id/cases`: a new version, the head's cases and then these. */
export const appendCasesBody = z.strictObject({
  cases: caseList.min(1, "must hold at least 1 case"),
  message: datasetMessage.optional(),
  base: baseVersion.optional(),
});
export type AppendCasesBody = z.infer<typeof appendCasesBody>;

/** `PATCH /api/v2/datasets/:id`: name and description are not content; no version is made. */
export const updateDatasetBody = z
  .strictObject({ name: datasetName.optional(), description: datasetDescription.nullable().optional() })
  .refine((body) => body.name !== undefined || body.description !== undefined, "must change name or description");
export type UpdateDatasetBody = z.infer<typeof updateDatasetBody>;

export const datasetReadQuery = z.object({
  version: datasetVersionRef.optional().describe("A version by hash or unique prefix; the head when absent"),
});

export const datasetCasesQuery = z.object({
  version: datasetVersionRef.optional().describe("A version by hash or unique prefix; the head when absent"),
  after: z.coerce
    .number({ error: "must be a case's position (a whole number from 0)" })
    .int("must be a case's position (a whole number from 0)")
    .min(0, "must be a case's position (a whole number from 0)")
    .max(Number.MAX_SAFE_INTEGER, "must be a case's position (a whole number from 0)")
    .optional()
    .describe("The position of the last case already read (next_after of the previous page)"),
  limit: z.coerce
    .number({ error: `must be a whole number from 1 to ${DATASET_PAGE.max}` })
    .int(`must be a whole number from 1 to ${DATASET_PAGE.max}`)
    .min(1, `must be a whole number from 1 to ${DATASET_PAGE.max}`)
    .max(DATASET_PAGE.max, `must be a whole number from 1 to ${DATASET_PAGE.max}`)
    .optional()
    .describe(`Cases per page, 1-${DATASET_PAGE.max} (default ${DATASET_PAGE.default}); a page also stops at 4 MiB`),
});

/** `POST /api/v2/datasets/:id/import`: the body is the file (JSONL or CSV). */
export const datasetImportQuery = z.object({
  mode: z
    .enum(["replace", "append"], { error: 'must be "replace" or "append"' })
    .optional()
    .describe("replace (default): the file's cases are the new version; append: the head's and then the file's"),
  message: datasetMessage.optional(),
  base: baseVersion.optional(),
});

/** `POST /api/v2/datasets/import`: a new dataset whose first version is the file. */
export const datasetCreateImportQuery = z.object({
  name: datasetName.describe("Unique in the project"),
  description: datasetDescription.optional(),
  message: datasetMessage.optional(),
});

export const datasetExportQuery = datasetReadQuery;

/** The import formats: JSONL (one case per line) and CSV (a header; columns are variables but the reserved). */
export const DATASET_IMPORT_TYPES = ["application/x-ndjson", "application/jsonl", "text/csv"] as const;
