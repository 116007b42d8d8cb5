/**
 * The response shapes of v2 as zod schemas: they generate the OpenAPI document, and the tests parse
 * real responses with them, so the document cannot drift from what the server sends.
 */

import { modelSettingsInput } from "@promptstore/core/prompts/model-settings";
import { toolInput } from "@promptstore/core/schemas";
import { FULL_HASH } from "@promptstore/core/version-ref";
import { z } from "zod";

const hash = z.string().regex(FULL_HASH).describe("SHA-256 hex of the version's canonical content");
const timestamp = z.iso.datetime().describe("ISO 8601, UTC, milliseconds");

const labelsOut = z
  .record(z.string(), hash)
  .describe("Every label of the prompt to its version, production included when set (docs/releases.md)");

const rolloutOut = z.strictObject({
  candidate: hash.describe("The version a share of reads gets"),
  percent: z.number().int().describe("That share, 1 to 99"),
});

export const sectionOut = z.strictObject({
  id: z.string(),
  title: z.string(),
  content: z.string().describe("The section's text, its includes expanded (docs/includes.md)"),
  enabled: z.boolean(),
  source: z
    .string()
    .optional()
    .describe("The text as written, with its includes ({{> prompt-id}}); only on a section that has includes"),
});

export const includeOut = z
  .strictObject({
    include: z.string().describe("The include's reference as written: safety, safety@staging, tone#Voice@latest"),
    prompt: z.string().describe("The included prompt"),
    section: z.string().nullable().describe("The one section taken, by title; null for its enabled sections"),
    pointer: z
      .string()
      .describe("What the include follows: production (also when not written), latest, a label, or a hash or prefix"),
    version: hash.describe("The version it took, pinned when the including version was saved"),
  })
  .describe("An include of a version and its pin (docs/includes.md)");

export const promptView = z.strictObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  prompt: z.string().describe("Enabled sections assembled as <Tag>…</Tag> blocks, guard appended when on"),
  sections: z.array(sectionOut),
  tools: z.array(toolInput).optional().describe("Omitted when the version defines none"),
  model: modelSettingsInput
    .optional()
    .describe("The version's model settings, keys in canonical (RFC 8785) order; omitted when it has none"),
  includes: z
    .array(includeOut)
    .optional()
    .describe("The version's includes with their pins (docs/includes.md); omitted when it has none"),
  variables: z.array(z.string()),
  version: hash,
  label: z
    .string()
    .describe("What resolved the read: production, latest, version, or the label asked for (docs/releases.md)"),
  production_version: hash.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  labels: labelsOut,
  fallback_for: z.string().optional().describe("The label asked for, when the prompt lacks it and its fallback served"),
  rollout: rolloutOut
    .extend({ arm: z.enum(["current", "candidate"]).describe("Which version this read got") })
    .optional()
    .describe("When the label that served has a gradual rollout"),
});

export const promptListItem = z.strictObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  production_version: hash.nullable(),
  latest_version: hash,
  created_at: timestamp,
  updated_at: timestamp,
  labels: labelsOut,
});

export const promptList = z.strictObject({
  project: z.strictObject({ id: z.string(), name: z.string() }),
  prompts: z.array(promptListItem),
  next_cursor: z.string().nullable().optional().describe("Present when limit or cursor was given; null at the end"),
});

export const createdPrompt = z.strictObject({
  id: z.string(),
  name: z.string(),
  version: hash,
  published: z.boolean(),
  created_at: timestamp,
});

export const savedVersion = z.strictObject({
  id: z.string(),
  version: hash,
  created: z.boolean(),
  published: z.boolean(),
});

export const publishedVersion = z.strictObject({
  id: z.string(),
  version: hash,
  published: z.boolean(),
  label: z.string().describe("The label moved: production unless another was asked for"),
  rollout: rolloutOut.optional().describe("The label's rollout after the publish; absent when none runs"),
});

export const removedLabel = z.strictObject({ id: z.string(), label: z.string(), removed: z.literal(true) });

export const releaseOut = z.strictObject({
  id: z.string(),
  prompt_id: z.string(),
  status: z.enum(["pending", "approved", "rejected", "stale", "cancelled"]),
  label: z.string(),
  version: hash,
  from_version: hash.nullable().describe("What the label pointed to when the request was made"),
  percent: z.number().int().nullable().describe("A rollout's share, or null to move the label whole"),
  message: z.string(),
  requested_by: z.string(),
  requested_at: timestamp,
  decided_by: z.string().nullable(),
  decided_at: timestamp.nullable(),
  comment: z.string().nullable(),
});

export const releaseList = z.strictObject({ releases: z.array(releaseOut) });

export const deletedPrompt = z.strictObject({
  id: z.string(),
  deleted: z.literal(true).describe("The prompt, its versions and pointers are gone; the id may be used again"),
});

export const versionList = z.strictObject({
  id: z.string(),
  production_version: hash.nullable(),
  latest_version: hash,
  versions: z.array(
    z.strictObject({
      version: hash,
      message: z.string().nullable(),
      created_at: timestamp,
      saved_by: z
        .string()
        .nullable()
        .describe(
          "Who saved it: user:<e-mail> or key:<key prefix>; a read key sees user (a person) without the e-mail",
        ),
      labels: labelsOut,
    }),
  ),
  labels: labelsOut,
});

export const importedPrompt = z.strictObject({
  id: z.string(),
  created: z.boolean().describe("The prompt did not exist and was created"),
  versions_created: z.number().int().describe("Versions added by this request"),
  versions_existing: z.number().int().describe("Versions sent that the prompt already had"),
  latest_version: hash,
  production_version: hash.nullable(),
  published: z.boolean().describe("Production moved"),
});

export const successEnvelope = <T extends z.ZodType>(data: T) => z.strictObject({ success: z.literal(true), data });
export const failureEnvelope = z.strictObject({ success: z.literal(false), error: z.string() });
