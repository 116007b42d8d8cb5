// Letters and digits of any script are kept, so titles in other languages stay readable in the tag.
const DROPPED = /[^\p{L}\p{M}\p{Nd}_.-]/gu;
const VALID_START = /^[\p{L}_]/u;

/** The XML-style tag a section title becomes in the assembled prompt ("Output Format" → "Output_Format"). */
export function tagName(title: string): string {
  const name = title.trim().replace(/\s+/gu, "_").replace(DROPPED, "");
  return VALID_START.test(name) ? name : `_${name}`;
}
