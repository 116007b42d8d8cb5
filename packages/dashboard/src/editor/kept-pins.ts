import { findIncludes } from "@promptstore/core/prompts/includes";
import type { IncludeView, SectionView } from "@promptstore/core/views";

/**
 * A section as the editor edits it: its text as written, includes and all (`source`), not the expanded text
 * reads serve (docs/includes.md).
 */
export const asWritten = (section: SectionView): SectionView => ({
  ...section,
  content: section.source ?? section.content,
});

/**
 * The pins of the version the edit began from that its sections still write: an edit elsewhere leaves an
 * include where it was pinned; an include added is pinned by the save to what it names then. Undefined when
 * none is kept.
 */
export function keptPins(
  includes: readonly IncludeView[] | undefined,
  sections: readonly { content: string }[],
): Record<string, string> | undefined {
  if (includes === undefined || includes.length === 0) return undefined;
  const found = findIncludes(sections);
  if ("problem" in found) return undefined;
  const written = new Set(found.includes.map((i) => i.reference));
  const kept = includes.filter((i) => written.has(i.include));
  return kept.length === 0 ? undefined : Object.fromEntries(kept.map((i) => [i.include, i.version]));
}
