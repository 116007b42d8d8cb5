/**
 * Whether an `If-None-Match` header matches `etag`: `*`, or a list in which one tag equals it under the
 * weak comparison RFC 9110 prescribes for this header (a `W/` prefix is ignored).
 */
export function noneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  for (const line of Array.isArray(header) ? header : [header]) {
    for (const raw of line.split(",")) {
      const tag = raw.trim();
      if (tag === "*" || tag === etag || (tag.startsWith("W/") && tag.slice(2) === etag)) return true;
    }
  }
  return false;
}
