/**
 * The text of includes as the dashboard previews them (docs/includes.md): an include takes, from the version
 * its pin (or, before a save, its pointer) names, that version's enabled sections joined by a blank line, or one
 * section by title: core's `includedText`, on the version as read (already expanded: nesting needs no more).
 */
import {
  INCLUDE_PATTERN,
  type IncludeRef,
  includedText,
  isFixedPointer,
  parseInclude,
} from "@promptstore/core/prompts/includes";
import type { PromptView } from "@promptstore/core/views";

/** An include written in a text, where it stands (for chips and jumps). */
export interface WrittenInclude extends IncludeRef {
  from: number;
  to: number;
}

/** Every include written in a text that parses, in order, with its place. */
export function writtenIncludes(text: string): WrittenInclude[] {
  if (!text.includes("{{>")) return [];
  const found: WrittenInclude[] = [];
  for (const match of text.matchAll(new RegExp(INCLUDE_PATTERN))) {
    const parsed = parseInclude(match[1] as string);
    if ("problem" in parsed) continue;
    found.push({ ...parsed, from: match.index, to: match.index + match[0].length });
  }
  return found;
}

/** The includes of texts, each reference once, in order of first appearance. */
export function distinctIncludes(texts: readonly string[]): IncludeRef[] {
  const seen = new Map<string, IncludeRef>();
  for (const text of texts) {
    for (const { from: _from, to: _to, ...ref } of writtenIncludes(text))
      if (!seen.has(ref.reference)) seen.set(ref.reference, ref);
  }
  return [...seen.values()];
}

/**
 * The version a pointer names now, from the included prompt's latest read (its labels): what a save would pin.
 * A hash or prefix is itself (the read resolves it). A label the prompt lacks is refused, as the save does.
 */
export function pointedVersion(latest: PromptView, pointer: string): string | { problem: string } {
  if (isFixedPointer(pointer)) return pointer;
  if (pointer === "latest") return latest.version;
  if (pointer === "production") return latest.labels.production ?? latest.production_version ?? latest.version;
  return latest.labels[pointer] ?? { problem: `prompt ${latest.id} has no version labelled ${pointer}` };
}

/** What an include takes from the version read, or why it takes nothing. */
export function takenText(
  ref: Pick<IncludeRef, "prompt" | "section">,
  version: PromptView,
): string | { problem: string } {
  const text = includedText(version.sections, ref.section);
  return (
    text ?? {
      problem: `version ${version.version.slice(0, 12)} of ${ref.prompt} has no enabled section titled "${ref.section}"`,
    }
  );
}
