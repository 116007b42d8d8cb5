/**
 * The input schemas of the service, shared by every surface (REST bodies and queries, MCP tool inputs,
 * the OpenAPI document), so each rejects the same bad input with the same message.
 */
import { z } from "zod";
import { ASSIGN_MAX_LENGTH, LABEL_REF, labelNameProblem, ROLLOUT_PERCENT } from "./labels.js";
import { MAX_INCLUDES_PER_VERSION } from "./prompts/includes.js";
import { modelSettingsInput, UNKNOWN_SETTING } from "./prompts/model-settings.js";
import { PROMPT_ID_PATTERN } from "./prompts/slug.js";
import { planSpec } from "./rollouts/plan-view.js";
import { jsonValueProblem, text } from "./text.js";
import { FULL_HASH, refPattern } from "./version-ref.js";

export const LIMITS = {
  sectionsPerVersion: 100,
  /** A section title: a Markdown heading of a real system prompt may run to several hundred characters. */
  titleLength: 1000,
  nameLength: 200,
  descriptionLength: 2000,
  messageLength: 1000,
  toolsPerVersion: 128,
  toolDescriptionLength: 4000,
  /**
   * A tool's `parameters`: levels of objects and arrays (the object itself is level 1) and characters as JSON.
   * Real function schemas are shallow (OpenAI accepts 10 levels of schema nesting, which is about 20 levels
   * of JSON); 32 leaves room for any of them and keeps every recursive consumer far from its stack limit.
   */
  toolParametersDepth: 32,
  toolParametersLength: 100_000,
  /** Versions in one import request; a longer history is sent in several (each is idempotent). */
  versionsPerImport: 100,
} as const;

export const promptId = text()
  .regex(PROMPT_ID_PATTERN, "must be 1-64 characters of a-z, 0-9, _ or -, starting with a letter or digit")
  .describe("The prompt's id: a slug unique in the project");

export const promptName = text()
  .trim()
  .min(1, "must not be empty")
  .max(LIMITS.nameLength, `must be at most ${LIMITS.nameLength} characters`)
  .describe("A human name, 1-200 characters; need not be unique");

export const promptDescription = text()
  .max(LIMITS.descriptionLength, `must be at most ${LIMITS.descriptionLength} characters`)
  .describe("What the prompt is for, up to 2000 characters");

export const sectionInput = z.strictObject({
  title: text()
    .max(LIMITS.titleLength, `must be at most ${LIMITS.titleLength} characters`)
    .refine((t) => t.trim() !== "", "must not be blank")
    .describe("The section's title: its XML-style tag in the assembled text (Output Format → <Output_Format>)"),
  // Its length is bounded by the server's configuration, checked by the service (content-limits.ts).
  content: text().describe(
    "The section's text; {{ name }} marks a variable the caller fills in. At most the server's PROMPTSTORE_MAX_SECTION_CHARS characters (1 000 000 unless configured).",
  ),
  enabled: z
    .boolean()
    .optional()
    .describe("Disabled sections are stored and hashed but never assembled. Default true."),
});

export const sectionsInput = z
  .array(sectionInput)
  .min(1, "must contain at least one section")
  .max(LIMITS.sectionsPerVersion, `must contain at most ${LIMITS.sectionsPerVersion} sections`)
  .describe("Content form 1: the ordered sections, 1 to 100; the full content of the version");

export const toolInput = z.strictObject({
  type: z.literal("function").describe('Always "function"'),
  function: z
    .strictObject({
      name: text()
        .regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, _ or -")
        .describe("The function's name, unique among the prompt's tools"),
      description: text()
        .max(LIMITS.toolDescriptionLength, `must be at most ${LIMITS.toolDescriptionLength} characters`)
        .optional()
        .describe("What the function does, for the model"),
      parameters: z
        .looseObject({
          type: z.literal("object"),
          // Free-form on purpose, said as `additionalProperties: true`: the `{}` zod writes for it is flagged
          // by the MCP Inspector, and clients that translate tool schemas for models reject it.
          properties: z.record(text(), z.unknown()).meta({ additionalProperties: true }).optional(),
          required: z.array(text()).optional(),
        })
        .meta({ additionalProperties: true })
        // The one free-form JSON value of the API: bounded before anything walks it recursively (the hash).
        .superRefine((parameters, ctx) => {
          const problem = jsonValueProblem(parameters, {
            maxDepth: LIMITS.toolParametersDepth,
            maxLength: LIMITS.toolParametersLength,
          });
          if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
        })
        .describe(
          `A JSON Schema object (type, properties, required) of the function's arguments, nested at most ${LIMITS.toolParametersDepth} levels deep and at most ${LIMITS.toolParametersLength} characters as JSON`,
        ),
    })
    .describe("The function the model may call"),
});

export const toolsInput = z
  .array(toolInput)
  .max(LIMITS.toolsPerVersion, `must contain at most ${LIMITS.toolsPerVersion} tools`)
  .describe("Function-calling tools in the chat-completions format; absent means none")
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      if (seen.has(tool.function.name)) {
        ctx.addIssue({ code: "custom", path: [i, "function", "name"], message: "duplicates another tool's name" });
      }
      seen.add(tool.function.name);
    });
  });

export const markdownInput = text().describe(
  "Content form 2: every level-1 heading (# Title) starts a section. At most as many characters as the server's PROMPTSTORE_MAX_BODY_BYTES (4 194 304 unless configured).",
);

export const message = text()
  .max(LIMITS.messageLength, `must be at most ${LIMITS.messageLength} characters`)
  .describe("A change note kept with the version, up to 1000 characters");

const FULL_HASH_MESSAGE = "must be the full 64-character hash of a version";
const HASH_MESSAGE = "7-64 lowercase hex characters of a version hash";

/** What a read's `version` may be: production, latest, a label, a hash or a prefix of one. */
export const READ_REF_PATTERN = refPattern("production", "latest", LABEL_REF);

export const versionRef = text()
  .regex(READ_REF_PATTERN, `must be production, latest, a label, or ${HASH_MESSAGE}`)
  .describe("production, latest, a label (docs/releases.md), a full version hash, or a unique prefix of 7+ characters");

export const publishRef = text()
  .regex(refPattern("latest"), `must be latest, or ${HASH_MESSAGE}`)
  .describe("latest, a full version hash, or a unique prefix of 7+ characters");

export const exactlyOneContentForm = <T extends { sections?: unknown; markdown?: unknown }>(
  body: T,
  ctx: z.RefinementCtx,
) => {
  if (body.sections !== undefined && body.markdown !== undefined) {
    ctx.addIssue({ code: "custom", path: ["markdown"], message: "send either sections or markdown, not both" });
  } else if (body.sections === undefined && body.markdown === undefined) {
    ctx.addIssue({ code: "custom", path: ["sections"], message: "required: send the content as sections or markdown" });
  }
};

/**
 * Pins given with written content (docs/includes.md): an include's reference to the full hash it is to keep.
 * Includes without one are pinned to what their pointer names at the save.
 */
export const includesInput = z
  .record(
    text().max(1200, "must be at most 1200 characters").describe("An include as its reference: safety, safety@staging"),
    text().regex(FULL_HASH, "must be the full 64-character hash of a version"),
  )
  .refine((pins) => Object.keys(pins).length <= MAX_INCLUDES_PER_VERSION, {
    message: `must hold at most ${MAX_INCLUDES_PER_VERSION} pins`,
  })
  .describe(
    "Pins to keep: an include's reference (as in a read's includes[].include) to the full hash of the version it is to take. Includes not named here take what their pointer (production by default) names at the save.",
  );

/** The fields of a create; MCP extends them, so the refinement is applied separately. */
export const createPromptFields = z.strictObject({
  id: promptId.optional().describe("Slug; derived from name when absent"),
  name: promptName,
  description: promptDescription.optional(),
  sections: sectionsInput.optional(),
  markdown: markdownInput.optional(),
  tools: toolsInput.optional(),
  model: modelSettingsInput.optional(),
  includes: includesInput.optional(),
  message: message.optional(),
  publish: z.boolean().optional().describe("Make the first version production. Default false."),
});

export const createPromptBody = createPromptFields.superRefine(exactlyOneContentForm);

export const saveVersionFields = z.strictObject({
  sections: sectionsInput.optional(),
  markdown: markdownInput.optional(),
  tools: toolsInput.optional(),
  model: modelSettingsInput.optional(),
  includes: includesInput.optional(),
  message: message.optional(),
  publish: z.boolean().optional().describe("Also point production at this version. Default false."),
  base_version: text()
    .regex(FULL_HASH, FULL_HASH_MESSAGE)
    .optional()
    .describe("The latest version this edit started from; if latest has moved since, the save is refused (409)"),
  name: promptName.optional().describe("Renames the prompt; not part of the version"),
  description: promptDescription.optional().describe("Changes the description; not part of the version"),
});

export const saveVersionBody = saveVersionFields.superRefine(exactlyOneContentForm);

export const labelName = text()
  .superRefine((name, ctx) => {
    const problem = labelNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe("A label (environment): ^[a-z][a-z0-9_-]{0,31}$, not all hexadecimal, not latest");

export const rolloutPercent = z
  .number({ error: "must be a whole number from 1 to 100" })
  .int("must be a whole number from 1 to 100")
  .min(ROLLOUT_PERCENT.min, "must be a whole number from 1 to 100")
  .max(ROLLOUT_PERCENT.max, "must be a whole number from 1 to 100")
  .describe("Start or change a gradual rollout: this share of reads gets the version; 100 completes it");

export const publishBody = z.strictObject({
  version: publishRef.optional(),
  label: labelName.optional().describe("The label to move; production when absent (the contract's publish)"),
  percent: rolloutPercent.optional(),
});

const booleanString = z.enum(["true", "false"], { error: "must be true or false" });

export const readQuery = z.object({
  version: versionRef.optional(),
  guard: booleanString.optional(),
  assign: text()
    .max(ASSIGN_MAX_LENGTH, `must be at most ${ASSIGN_MAX_LENGTH} characters`)
    .optional()
    .describe("Who reads (a user or tenant id): the same value always gets the same arm of a rollout"),
});

/** What a read asks for, from any surface; what is left out takes the defaults of `readDefaults`. */
export interface ReadOptions {
  /** `production` (default), `latest`, a full hash or a 7+ character prefix. */
  version?: string | undefined;
  /** Append the guard text (default true). */
  guard?: boolean | undefined;
  /** Who reads, for a rollout's sticky assignment; a read without it is assigned at random. */
  assign?: string | undefined;
}

/** The one place a read's defaults are decided: production, with the guard. */
export function readDefaults(options: ReadOptions): { version: string; guard: boolean } {
  return { version: options.version ?? "production", guard: options.guard ?? true };
}

/** A read's query string (`?version=&guard=`) as read options. */
export function readOptionsOf(query: z.output<typeof readQuery>): ReadOptions {
  return {
    version: query.version,
    guard: query.guard === undefined ? undefined : query.guard === "true",
    assign: query.assign,
  };
}

export const eventsQuery = z.object({
  include: z
    .enum(["read"], { error: "must be read" })
    .optional()
    .describe("read: each live event also carries the production read it leads to (guard on), as `read`"),
});

/** `limit` of a paginated read: a page of 1 to 100 items, from the query string. */
export const pageLimit = z.coerce
  .number({ error: "must be a whole number from 1 to 100" })
  .int("must be a whole number from 1 to 100")
  .min(1, "must be a whole number from 1 to 100")
  .max(100, "must be a whole number from 1 to 100")
  .optional();

export const listQuery = z.object({
  limit: pageLimit.describe("Page size, 1-100; without it every prompt is listed"),
  cursor: text().max(512, "is not a valid cursor").optional().describe("next_cursor of the previous page"),
});

export type CreatePromptBody = z.infer<typeof createPromptBody>;
export type SaveVersionBody = z.infer<typeof saveVersionBody>;

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === "number") return `${acc}[${part}]`;
    return acc === "" ? String(part) : `${acc}.${String(part)}`;
  }, "");
}

/** One message for the first problem, naming the field: `sections[2].title: must not be blank`. */
export function describeZodError(error: z.ZodError, root = "body"): string {
  const issue = error.issues[0];
  if (!issue) return `${root}: is invalid`;
  const path = [...issue.path];
  let problem = issue.message;
  if (issue.code === "unrecognized_keys") {
    path.push(issue.keys[0] as string);
    // A schema may say why a key is unknown (model settings point to model.extra); the rest say it plainly.
    problem = issue.message === UNKNOWN_SETTING ? UNKNOWN_SETTING : "is not a known field";
  } else if (issue.code === "invalid_key") {
    // The key itself is what is wrong: name the object that holds it, not the key (it may not even print).
    path.pop();
    problem = `has a key that ${issue.issues[0]?.message ?? "is not valid"}`;
  }
  // A path that starts at an array index reads as the root's element: `sections[0].title`.
  const field = formatPath(typeof path[0] === "number" ? [root, ...path] : path);
  return `${field === "" ? root : field}: ${problem}`;
}

const fullHash = text().regex(FULL_HASH, FULL_HASH_MESSAGE);

export const importedVersion = z.strictObject({
  version: fullHash.describe("The version's hash; the server recomputes it from the content and refuses a mismatch"),
  message: message.nullable().optional(),
  created_at: z.iso
    .datetime({ message: "must be an ISO 8601 UTC timestamp" })
    .describe("When the version was saved on the source; kept"),
  saved_by: text().max(200, "must be at most 200 characters").nullable().optional().describe("Kept as recorded"),
  sections: sectionsInput,
  tools: toolsInput.optional(),
  model: modelSettingsInput.optional(),
  includes: includesInput
    .optional()
    .describe(
      "The pins of a version with includes (docs/includes.md): each include's reference to the full hash of the version it took, which the import (or the store) must hold. Absent: the sections are taken as they are, any {{> …}} in them literal text",
    ),
});

/**
 * `POST /api/v2/import`: one prompt with versions taken from another instance or project. A prompt with
 * many versions is sent in several requests; each is idempotent, so a repeated or resumed import makes
 * nothing twice.
 */
export const importPromptBody = z.strictObject({
  id: promptId,
  name: promptName,
  description: promptDescription.optional(),
  created_at: z.iso
    .datetime({ message: "must be an ISO 8601 UTC timestamp" })
    .optional()
    .describe("When the prompt was created on the source; used when the import creates it"),
  versions: z
    .array(importedVersion)
    .max(LIMITS.versionsPerImport, `must contain at most ${LIMITS.versionsPerImport} versions`)
    .describe("Versions to add, any order; those the prompt already has are left as they are"),
  latest_version: fullHash
    .optional()
    .describe("Points latest at this version (sent in this request or held already); required to create"),
  production_version: fullHash
    .optional()
    .describe("Points production at this version (sent or held); absent leaves production where it is"),
});

export type ImportPromptBody = z.infer<typeof importPromptBody>;

/** `POST /api/v2/prompts/:id/releases`: ask for a (protected) label to move (docs/releases.md). */
export const releaseRequestBody = z.strictObject({
  label: labelName.describe("The label to move"),
  version: publishRef.describe("The version it is to point to: latest, a full hash, or a unique prefix"),
  percent: rolloutPercent.optional(),
  message: message.optional().describe("Why, for whoever approves it"),
  plan: planSpec
    .optional()
    .describe(
      "A rollout plan (steps and guardrails, docs/rollouts.md) that the approval starts: the label rolls out to the first step's percent, and the approval covers every later step",
    ),
});

export const RELEASE_STATUSES = ["pending", "approved", "rejected", "stale", "cancelled"] as const;

export const releasesQuery = z.object({
  status: z
    .enum(RELEASE_STATUSES, { error: `must be one of ${RELEASE_STATUSES.join(", ")}` })
    .optional()
    .describe("Only requests in this state"),
  limit: pageLimit.describe("At most this many, newest first (1-100, default 100)"),
});

/** Approving or rejecting a release, with a comment (dashboard). */
export const releaseDecisionBody = z.strictObject({
  comment: message.optional().describe("Why, kept with the decision"),
});

/** A label's settings (owners): what it is for, whether it is protected, what it falls back to. */
export const labelSettingsBody = z.strictObject({
  description: text().max(500, "must be at most 500 characters").optional(),
  protected: z.boolean().optional(),
  fallback: labelName.nullable().optional().describe("A label to serve when a prompt lacks this one; null for none"),
});

export type ReleaseRequestBody = z.infer<typeof releaseRequestBody>;

/** `POST /api/v2/prompts/:id/update-includes`: new pins for a prompt's includes (docs/includes.md). */
export const updateIncludesBody = z.strictObject({
  only: z
    .array(promptId)
    .min(1, "must name at least one prompt")
    .max(MAX_INCLUDES_PER_VERSION, `must name at most ${MAX_INCLUDES_PER_VERSION} prompts`)
    .optional()
    .describe("Update only the includes of these prompts; every include that follows a label or latest when absent"),
  label: labelName
    .optional()
    .describe("The label whose version is updated, and which is published when asked; production when absent"),
  version: publishRef
    .optional()
    .describe("Start from this version instead of what the label serves: latest, a full hash or a prefix"),
  publish: z
    .boolean()
    .optional()
    .describe(
      "Also point the label at the new version where allowed: a protected label gets a release request; a label whose required evaluation has not passed is left where it is. Default false.",
    ),
  message: message.optional().describe("The new version's change note; one naming the pins moved when absent"),
});

/** `POST /api/v2/prompts/:id/included-by/update`: the same for chosen prompts that include this one. */
export const updateDependentsBody = z.strictObject({
  prompts: z
    .array(promptId)
    .min(1, "must name at least one prompt")
    .max(100, "must name at most 100 prompts")
    .optional()
    .describe("The including prompts to update; every one whose served version's pin is behind when absent"),
  label: updateIncludesBody.shape.label,
  publish: updateIncludesBody.shape.publish,
  message: updateIncludesBody.shape.message,
});

export type UpdateIncludesBody = z.infer<typeof updateIncludesBody>;
export type UpdateDependentsBody = z.infer<typeof updateDependentsBody>;
