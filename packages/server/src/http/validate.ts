import { AppError } from "@promptstore/core/errors";
import { describeZodError } from "@promptstore/core/schemas";
import type { z } from "zod";

/** Parses request input with a shared schema; the 400 names the first field that is wrong. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, root: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new AppError("bad_request", describeZodError(result.error, root));
  return result.data;
}
