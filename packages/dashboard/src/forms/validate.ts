/**
 * Validates a form's body with the same zod schema the server uses, and words each problem the way the
 * server would (`describeZodError`), so a message reads the same whether it came from here or from an
 * answer of the API, and lands next to the same input.
 */
import { describeZodError } from "@promptstore/core/schemas";
import { type FieldError, parseFieldError } from "../api/errors";

type ZodErrorLike = Parameters<typeof describeZodError>[0];

interface Schema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: ZodErrorLike };
}

export type Validated<T> = { ok: true; data: T } | { ok: false; errors: FieldError[] };

export function validate<T>(schema: Schema<T>, value: unknown, root = "body"): Validated<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, errors: describeIssues(result.error, root) };
}

/** One message per problem (zod stops at none), each in the server's words. */
export function describeIssues(error: ZodErrorLike, root = "body"): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const issue of error.issues) {
    // `describeZodError` words the first issue; hand it one at a time.
    const described = parseFieldError(describeZodError({ ...error, issues: [issue] } as ZodErrorLike, root));
    const key = `${described.field}\u0000${described.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(described);
  }
  return errors;
}
