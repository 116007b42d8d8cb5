/** MCP tool inputs, composed from the schemas the REST API validates with. */

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
  versionRef,
} from "@promptstore/core/schemas";
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

export const deletePromptInput = z.strictObject({
  id: promptId.describe("The id (slug) of the prompt to delete, with all its versions; this cannot be undone"),
});
