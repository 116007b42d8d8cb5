import { notFound } from "@promptstore/core/errors";
import { PROMPT_ID_PATTERN } from "@promptstore/core/slug";

/** An id that cannot exist is simply not found: nothing outside the pattern was ever stored. */
export function promptIdParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? "";
  if (!PROMPT_ID_PATTERN.test(id)) throw notFound(`prompt ${id.slice(0, 64)} not found`);
  return id;
}
