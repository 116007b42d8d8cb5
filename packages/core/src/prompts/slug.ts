export const PROMPT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const MAX_BASE_LENGTH = 56; // leaves room for a "-NNNNNNN" collision suffix within 64 characters

/** "Support Bot" → "support-bot"; accents are folded so that most Latin names keep their letters. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_BASE_LENGTH)
    .replace(/-+$/, "");
  return slug === "" ? "prompt" : slug;
}

/** The n-th candidate id for a base slug: base, base-2, base-3 … */
export function slugCandidate(base: string, n: number): string {
  return n <= 1 ? base : `${base}-${n}`;
}
