/**
 * Checks (issue 38): what a good answer is, as plain data. Each is `{ type, name?, ...params }`; a
 * check set is an ordered list of them, named uniquely (a check without a name is called by its type, and the
 * second of a type `<type>#2`), and hashed as content: its canonical JSON is part of an evaluation's identity.
 */
import { RE2JS } from "re2js";
import { z } from "zod";
import { promptId, versionRef } from "../schemas.js";
import { text } from "../text.js";
import { WEBHOOK_ID } from "../webhooks.js";
import { CHECK_LIMITS, CHECK_TYPES } from "./constants.js";

export { CHECK_LIMITS, CHECK_TYPES, type CheckType } from "./constants.js";

const name = text()
  .min(1, "must not be empty")
  .max(CHECK_LIMITS.nameLength, `must be at most ${CHECK_LIMITS.nameLength} characters`)
  .optional();
const value = text().max(CHECK_LIMITS.textLength, `must be at most ${CHECK_LIMITS.textLength} characters`);
const needle = value.min(1, "must not be empty");
const caseInsensitive = z.boolean().optional();

/** The regex flags RE2 takes: i (case), m (multi-line anchors), s (dot matches newline). */
const RE2_FLAGS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
};

/** The pattern compiled by RE2 (linear time whatever the answer), or the reason it is refused. */
export function compilePattern(pattern: string, flags = ""): RE2JS | string {
  let bits = 0;
  for (const flag of flags) {
    const bit = RE2_FLAGS[flag];
    if (bit === undefined) return `flag ${JSON.stringify(flag)} is not one of i, m, s`;
    bits |= bit;
  }
  try {
    return RE2JS.compile(pattern, bits);
  } catch (error) {
    return `is not a pattern RE2 takes: ${(error as Error).message.slice(0, 200)}`;
  }
}

const jsonObject = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= CHECK_LIMITS.schemaLength, {
    message: `must be at most ${CHECK_LIMITS.schemaLength} characters as JSON`,
  })
  // Any JSON object: `additionalProperties: true` rather than zod's `{}` (strict linters refuse that).
  .meta({ additionalProperties: true });

export const check = z.discriminatedUnion(
  "type",
  [
    z.strictObject({
      type: z.literal("equals"),
      name,
      value,
      trim: z.boolean().optional(),
      case_insensitive: caseInsensitive,
    }),
    z.strictObject({ type: z.literal("contains"), name, value: needle, case_insensitive: caseInsensitive }),
    z.strictObject({ type: z.literal("not_contains"), name, value: needle, case_insensitive: caseInsensitive }),
    z
      .strictObject({
        type: z.literal("regex"),
        name,
        pattern: text()
          .min(1, "must not be empty")
          .max(CHECK_LIMITS.patternLength, `must be at most ${CHECK_LIMITS.patternLength} characters`),
        flags: text().max(3).optional(),
      })
      .superRefine((c, ctx) => {
        const compiled = compilePattern(c.pattern, c.flags);
        if (typeof compiled === "string") {
          ctx.addIssue({
            code: "custom",
            path: [c.flags !== undefined && compiled.startsWith("flag") ? "flags" : "pattern"],
            message: compiled,
          });
        }
      }),
    z.strictObject({ type: z.literal("json"), name }),
    z.strictObject({ type: z.literal("json_schema"), name, schema: jsonObject.optional() }),
    z.strictObject({
      type: z.literal("tool_call"),
      name,
      function: text().min(1, "must not be empty").max(64, "must be at most 64 characters"),
      arguments: jsonObject.optional(),
    }),
    z.strictObject({
      type: z.literal("max_chars"),
      name,
      value: z.number().int().min(0).max(10_000_000),
    }),
    z.strictObject({
      type: z.literal("expected"),
      name,
      trim: z.boolean().optional(),
      case_insensitive: caseInsensitive,
    }),
    z.strictObject({
      type: z.literal("judge"),
      name,
      prompt: promptId,
      /** A label (`production` when absent), `latest`, or a hash or prefix; pinned to a hash when it runs. */
      version: versionRef.optional(),
      /** At or above this score the answer passes (0.5 when absent). */
      pass_score: z.number().min(0).max(1).optional(),
    }),
    z.strictObject({
      type: z.literal("webhook"),
      name,
      /**
       * One of the project's webhook endpoints (`whk_…`): the check POSTs to its URL, signed with its secret,
       * as the project's event deliveries are. The secret never enters the check set.
       */
      endpoint: text().regex(WEBHOOK_ID, "must be a webhook endpoint id (whk_ and 24 hex characters)"),
    }),
  ],
  { error: `must have a type: ${CHECK_TYPES.join(", ")}` },
);
export type Check = z.infer<typeof check>;

/** The name each check of a set answers by: its own, else its type (`<type>#2` for the second of a type). */
export function checkNames(checks: readonly Check[]): string[] {
  const seen = new Map<string, number>();
  return checks.map((c) => {
    if (c.name !== undefined) return c.name;
    const n = (seen.get(c.type) ?? 0) + 1;
    seen.set(c.type, n);
    return n === 1 ? c.type : `${c.type}#${n}`;
  });
}

export const checkSet = z
  .array(check)
  .min(1, "must hold at least one check")
  .max(CHECK_LIMITS.checksPerSet, `must hold at most ${CHECK_LIMITS.checksPerSet} checks`)
  .superRefine((checks, ctx) => {
    const names = checkNames(checks);
    const first = new Map<string, number>();
    names.forEach((n, i) => {
      const earlier = first.get(n);
      if (earlier !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [i, "name"],
          message: `${JSON.stringify(n)} is also check ${earlier}'s name`,
        });
      } else first.set(n, i);
    });
  });

/** Checks that call out (a model, a URL): their verdicts are the server's, through the playground's paths. */
export function isExternal(c: Check): c is Extract<Check, { type: "judge" | "webhook" }> {
  return c.type === "judge" || c.type === "webhook";
}
