import { notFound } from "../../core/errors.js";
import { promptId } from "../../core/schemas.js";

/** An id that cannot exist is simply not found: nothing outside the pattern was ever stored. */
export function promptIdParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? "";
  if (!promptId.safeParse(id).success) throw notFound(`prompt ${id.slice(0, 64)} not found`);
  return id;
}
