import { badRequest, notFound } from "@promptstore/core/errors";
import { labelNameProblem } from "@promptstore/core/labels";
import { PROMPT_ID_PATTERN } from "@promptstore/core/prompts/slug";
import { hasNoNul, isWellFormed } from "@promptstore/core/text";

/** An id that cannot exist is simply not found: nothing outside the pattern was ever stored. */
export function promptIdParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? "";
  if (!PROMPT_ID_PATTERN.test(id)) throw notFound(`prompt ${id.slice(0, 64)} not found`);
  return id;
}

/**
 * An opaque id from the path (project, organization, member, key), looked up as given. One that no database
 * could hold (a NUL from `%00`, which PostgreSQL refuses in text and answered 500) is simply not found, with
 * the words the lookup would have used.
 */
export function storableIdParam(params: unknown, name: string, kind: string): string {
  const id = (params as Record<string, string | undefined>)[name] ?? "";
  if (!hasNoNul(id) || !isWellFormed(id)) throw notFound(`${kind} ${id.slice(0, 64)} not found`);
  return id;
}

/** A label's name from the path; one no label can have is a 400 naming `label`. */
export function labelParam(params: unknown): string {
  const label = (params as { label?: string }).label ?? "";
  const problem = labelNameProblem(label);
  if (problem) throw badRequest(`label: ${problem}`);
  return label;
}
