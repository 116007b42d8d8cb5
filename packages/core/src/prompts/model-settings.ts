/**
 * A version's model settings: which model the prompt is written for and how it is to be called. Content, like
 * sections and tools: hashed with them (hash.ts), so a change of settings is a new version. One schema for
 * every surface (REST, MCP, import, git files, the dashboard).
 */
import { z } from "zod";
import { jsonValueProblem, text } from "../text.js";

export const MODEL_LIMITS = {
  nameLength: 200,
  temperature: { min: 0, max: 2 },
  topP: { min: 0, max: 1 },
  maxOutputTokens: 1_000_000,
  stopSequences: 4,
  stopLength: 200,
  /** `response_format.json_schema.schema` and `extra`: bounded as a tool's `parameters` are (schemas.ts). */
  jsonDepth: 32,
  jsonLength: 100_000,
} as const;

/** The message for a key the settings do not know; describeZodError keeps it as written. */
export const UNKNOWN_SETTING = "is not a known setting; put provider-specific settings in model.extra";

const SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A free-form JSON object, bounded before anything (the hash) walks it recursively. */
function boundedObject(what: string) {
  return z
    .looseObject({})
    .meta({ additionalProperties: true })
    .superRefine((value, ctx) => {
      const problem = jsonValueProblem(value, { maxDepth: MODEL_LIMITS.jsonDepth, maxLength: MODEL_LIMITS.jsonLength });
      if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
    })
    .describe(
      `${what}: a JSON object nested at most ${MODEL_LIMITS.jsonDepth} levels deep and at most ${MODEL_LIMITS.jsonLength} characters as JSON`,
    );
}

const between = (min: number, max: number) => `must be a number from ${min} to ${max}`;

export const responseFormatInput = z
  .discriminatedUnion(
    "type",
    [
      z.strictObject({ type: z.literal("text") }),
      z.strictObject({ type: z.literal("json_object") }),
      z.strictObject({
        type: z.literal("json_schema"),
        json_schema: z.strictObject({
          name: text().regex(SCHEMA_NAME, "must be 1-64 characters of A-Z, a-z, 0-9, _ or -"),
          schema: boundedObject("The JSON Schema the answer must match"),
          strict: z.boolean({ error: "must be true or false" }).optional(),
        }),
      }),
    ],
    { error: "must be text, json_object or json_schema" },
  )
  .describe("How the model is to answer: text, any JSON object, or JSON matching a schema");

export const modelSettingsInput = z
  .strictObject(
    {
      name: text({ error: "required: the model's name" })
        .trim()
        .min(1, "must not be empty")
        .max(MODEL_LIMITS.nameLength, `must be at most ${MODEL_LIMITS.nameLength} characters`)
        .describe("The model's name as its provider calls it (gpt-4o, claude-sonnet-4-5, …)"),
      temperature: z
        .number({ error: between(0, 2) })
        .min(MODEL_LIMITS.temperature.min, between(0, 2))
        .max(MODEL_LIMITS.temperature.max, between(0, 2))
        .optional()
        .describe("Sampling temperature, 0 to 2"),
      top_p: z
        .number({ error: between(0, 1) })
        .min(MODEL_LIMITS.topP.min, between(0, 1))
        .max(MODEL_LIMITS.topP.max, between(0, 1))
        .optional()
        .describe("Nucleus sampling: the share of probability mass considered, 0 to 1"),
      max_output_tokens: z
        .number({ error: `must be a whole number from 1 to ${MODEL_LIMITS.maxOutputTokens}` })
        .int(`must be a whole number from 1 to ${MODEL_LIMITS.maxOutputTokens}`)
        .min(1, `must be a whole number from 1 to ${MODEL_LIMITS.maxOutputTokens}`)
        .max(MODEL_LIMITS.maxOutputTokens, `must be a whole number from 1 to ${MODEL_LIMITS.maxOutputTokens}`)
        .optional()
        .describe("The most tokens the model may answer with, 1 to 1 000 000"),
      stop: z
        .array(
          text()
            .min(1, "must not be empty")
            .max(MODEL_LIMITS.stopLength, `must be at most ${MODEL_LIMITS.stopLength} characters`),
        )
        .min(1, "must contain 1 to 4 stop sequences; leave stop out for none")
        .max(MODEL_LIMITS.stopSequences, "must contain 1 to 4 stop sequences")
        .optional()
        .describe("Up to 4 sequences at which the model stops"),
      response_format: responseFormatInput.optional(),
      extra: boundedObject("Provider-specific settings, passed on as they are").optional(),
    },
    { error: (issue) => (issue.code === "unrecognized_keys" ? UNKNOWN_SETTING : undefined) },
  )
  .describe("The model settings of the version (content: hashed with the sections and tools); absent means none");

export type ModelSettings = z.output<typeof modelSettingsInput>;
