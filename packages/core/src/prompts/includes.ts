import { labelNameProblem, PRODUCTION } from "../labels.js";
import { HASH_OR_PREFIX } from "../version-ref.js";

/**
 * Includes (docs/includes.md): a section's content may include another prompt of the project, written
 * `{{> prompt-id}}`, `{{> prompt-id@label}}`, `{{> prompt-id@latest}}`, `{{> prompt-id@<hash or prefix>}}`,
 * and the same with `#Section title` after the id to take one section: `{{> prompt-id#Tone@staging}}`.
 * The `>` keeps it apart from a variable (`{{ name }}` starts with a letter or `_`). A save pins each
 * include to the full hash its pointer names then; the version's content (and hash) holds the pins.
 */

/** One include as written, `{{>` to `}}` on one line: the part inside is the first group. */
export const INCLUDE_PATTERN = /\{\{>([^{}\r\n]*)\}\}/g;

/** How many distinct includes one version may hold. */
export const MAX_INCLUDES_PER_VERSION = 100;

/** How deep includes may nest: a prompt that includes one that includes one… at most this many levels. */
export const MAX_INCLUDE_DEPTH = 5;

/** An include as parsed: what it names and what it takes. */
export interface IncludeRef {
  /**
   * The include in its one written form (`id`, `id#Title`, `id@pointer`, `id#Title@pointer`), spaces
   * around it and around the title dropped: the key of its pin.
   */
  reference: string;
  /** The included prompt's id. */
  prompt: string;
  /** One section of it, by title; absent for the whole prompt (its enabled sections). */
  section?: string;
  /** `production` (written or not), `latest`, another label, or a hash or prefix of 7+ characters. */
  pointer: string;
  /** Whether the pointer was written (`@…`): an absent one means production. */
  written: boolean;
}

/** The pins of a version: each include's reference to the full hash of the version it took. */
export type IncludePins = Record<string, string>;

const INNER = /^([a-z0-9][a-z0-9_-]{0,63})(?:#([^@]*))?(?:@([^@]*))?$/;

const SYNTAX =
  "must be {{> prompt-id}}, optionally with #Section title, and @label, @latest or @<version hash or 7+ character prefix>";

/** The include written inside `{{>` and `}}`, or why it is not one. */
export function parseInclude(inner: string): IncludeRef | { problem: string } {
  const match = INNER.exec(inner.trim());
  if (!match) return { problem: SYNTAX };
  const prompt = match[1] as string;
  const title = match[2]?.trim();
  if (title === "") return { problem: "must name a section title after #" };
  const written = match[3] !== undefined;
  const pointer = match[3] ?? PRODUCTION;
  if (written && pointer !== "latest" && labelNameProblem(pointer) !== undefined && !HASH_OR_PREFIX.test(pointer)) {
    return { problem: `@${pointer}: must be latest, a label, or 7-64 lowercase hex characters of a version hash` };
  }
  const reference = `${prompt}${title === undefined ? "" : `#${title}`}${written ? `@${pointer}` : ""}`;
  return { reference, prompt, ...(title === undefined ? {} : { section: title }), pointer, written };
}

/** Whether an include's pointer names a version for good (a hash or prefix) rather than one that moves. */
export function isFixedPointer(pointer: string): boolean {
  // No label is all hexadecimal (labels.ts), so a pointer that is one names a version.
  return HASH_OR_PREFIX.test(pointer);
}

/** An include found in written sections: `at` is the first section it appears in. */
export type FoundInclude = IncludeRef & { at: number };

/** The includes of sections, each once in order of first appearance, or the first one that does not parse. */
export function findIncludes(
  sections: readonly { content: string }[],
): { includes: FoundInclude[] } | { problem: string; section: number } {
  const seen = new Map<string, FoundInclude>();
  for (const [i, section] of sections.entries()) {
    if (!section.content.includes("{{>")) continue;
    for (const match of section.content.matchAll(INCLUDE_PATTERN)) {
      const parsed = parseInclude(match[1] as string);
      if ("problem" in parsed) return { problem: `include "${match[0]}": ${parsed.problem}`, section: i };
      if (!seen.has(parsed.reference)) seen.set(parsed.reference, { ...parsed, at: i });
    }
  }
  return { includes: [...seen.values()] };
}

/**
 * How long a section's content is once its includes are replaced by their texts, without building it (a
 * text included many times could make it far longer than anything that should be built).
 */
export function expandedLength(content: string, texts: ReadonlyMap<string, string>): number {
  let length = content.length;
  if (!content.includes("{{>")) return length;
  for (const match of content.matchAll(INCLUDE_PATTERN)) {
    const parsed = parseInclude(match[1] as string);
    const text = "problem" in parsed ? undefined : texts.get(parsed.reference);
    if (text !== undefined) length += text.length - match[0].length;
  }
  return length;
}

/** Whether a text holds anything written as an include (parsed or not). */
export function hasIncludes(sections: readonly { content: string }[]): boolean {
  return sections.some((s) => s.content.includes("{{>") && ANY_INCLUDE.test(s.content));
}

const ANY_INCLUDE = new RegExp(INCLUDE_PATTERN.source);

/**
 * A section's content with every include replaced by its text (`texts` by reference). Replaced texts are
 * not scanned again: what an included version holds was expanded when it was saved.
 */
export function expandIncludes(content: string, texts: ReadonlyMap<string, string>): string {
  return content.replace(INCLUDE_PATTERN, (whole, inner: string) => {
    const parsed = parseInclude(inner);
    if ("problem" in parsed) return whole;
    const text = texts.get(parsed.reference);
    return text === undefined ? whole : text;
  });
}

/**
 * What an include takes from the version it is pinned to (its sections already expanded): the enabled
 * sections' contents joined by one blank line (as sections are in the assembled text, without their tags),
 * or the content of the first enabled section with that title (titles compared without surrounding spaces).
 * Undefined when there is no such section.
 */
export function includedText(
  sections: readonly { title: string; content: string; enabled: boolean }[],
  section: string | undefined,
): string | undefined {
  const enabled = sections.filter((s) => s.enabled);
  if (section === undefined) return enabled.map((s) => s.content).join("\n\n");
  return enabled.find((s) => s.title.trim() === section)?.content;
}
