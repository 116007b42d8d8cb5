/**
 * The model settings a run uses, in the shape the model-settings work gives a version's `model` field
 * (branch i21a): until that lands this is the one definition, and switching to core's schema of it is a
 * change of this file alone.
 */
import canonicalizeModule from "canonicalize";
import { z } from "zod";
import { sha256Hex } from "./prompts/hash.js";
import { LIMITS } from "./schemas.js";
import { jsonValueProblem, text } from "./text.js";

/** The bounds of free-form JSON (a JSON Schema, `extra`): those a tool's parameters already have. */
const JSON_BOUNDS = { maxDepth: LIMITS.toolParametersDepth, maxLength: LIMITS.toolParametersLength };

const boundedObject = (what: string) =>
  z
    .record(text(), z.unknown())
    .superRefine((value, ctx) => {
      const problem = jsonValueProblem(value, JSON_BOUNDS);
      if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
    })
    // Any JSON object: said as `additionalProperties: true`, not zod's `{}`, which strict JSON Schema
    // linters (the MCP Inspector's) refuse in a tool's input schema.
    .meta({ additionalProperties: true })
    .describe(what);

export const responseFormat = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("text") }),
    z.strictObject({ type: z.literal("json_object") }),
    z.strictObject({
      type: z.literal("json_schema"),
      json_schema: z.strictObject({
        name: text().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, _ or -"),
        schema: boundedObject("The JSON Schema the answer must follow"),
        strict: z.boolean().optional(),
      }),
    }),
  ])
  .describe("text, json_object, or json_schema with { name, schema, strict? }");

const settingsFields = {
  name: text().trim().min(1, "must not be empty").max(200, "must be at most 200 characters").describe("The model"),
  temperature: z.number().min(0, "must be from 0 to 2").max(2, "must be from 0 to 2").optional(),
  top_p: z.number().min(0, "must be from 0 to 1").max(1, "must be from 0 to 1").optional(),
  max_output_tokens: z.number().int("must be a whole number").min(1).max(1_000_000).optional(),
  stop: z.array(text().min(1).max(200)).max(4, "must hold at most 4 sequences").optional(),
  response_format: responseFormat.optional(),
  extra: boundedObject("Provider-specific parameters, sent as they are").optional(),
};

/** A version's model settings. */
export const modelSettings = z.strictObject(settingsFields);
export type ModelSettings = z.infer<typeof modelSettings>;

/** A run's overrides: any of the settings, each replacing the version's. */
export const modelOverride = z.strictObject({ ...settingsFields, name: settingsFields.name.optional() });
export type ModelOverride = z.infer<typeof modelOverride>;

/** The version's settings with the run's overrides on top, key by key; undefined keys are left out. */
export function mergeSettings(
  base: Partial<ModelSettings> | undefined,
  override: ModelOverride | undefined,
): Partial<ModelSettings> {
  const merged: Record<string, unknown> = {};
  for (const source of [base ?? {}, override ?? {}]) {
    for (const [key, value] of Object.entries(source)) if (value !== undefined) merged[key] = value;
  }
  return merged as Partial<ModelSettings>;
}

// The package is CommonJS (`module.exports = fn`) but its typings declare a default export.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

/**
 * What a kept result is keyed by besides its version and example: the sha256 hex of the RFC 8785 canonical
 * JSON of `{ connection, guard, model }` (the effective settings), so equal settings give the same key.
 */
export function settingsHash(settings: { connection: string; guard: boolean; model: Partial<ModelSettings> }): string {
  return sha256Hex(canonicalize(settings) as string);
}
