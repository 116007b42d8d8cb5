import { badRequest } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import type { Section } from "@promptstore/core/prompts/content";
import type { ContentLimits } from "@promptstore/core/prompts/content-limits";
import {
  expandedLength,
  type FoundInclude,
  type IncludePins,
  includedText,
  isFixedPointer,
  MAX_INCLUDE_DEPTH,
} from "@promptstore/core/prompts/includes";
import { shortHash } from "@promptstore/core/version-ref";
import type { IncludeView } from "@promptstore/core/views";
import type { PinnedVersion } from "../../../store/prompts/includes.js";
import type { VersionIncludes } from "../../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";
import type { Expansion } from "../version-document.js";

/** What a save made of its includes: the pins its content hashes, the rows the store keeps, the expansion. */
export interface Resolution {
  pins: IncludePins;
  includes: VersionIncludes;
  expansion: Expansion;
}

/**
 * Takes the write locks of a save's prompt and of every prompt it includes, in the order of their ids, so
 * that two saves never wait for each other in a circle. Held to the end of the save's transaction: a piece's
 * save, publish or deletion waits for (or is waited for by) the save that pins it, so its pin is never of a
 * pointer that moved in between, and a publish that makes it stale sees it (docs/includes.md).
 */
export async function lockPrompts(tx: ProjectStore, promptIds: Iterable<string>): Promise<void> {
  for (const id of [...new Set(promptIds)].sort()) await tx.lockPrompt(id);
}

/**
 * Pins each include of written sections, in the save's transaction (the prompts locked): to the version given
 * in `given` when it names it, else to what its pointer names now. Refuses, as a 400 naming the section, an
 * unknown prompt, version or label, an include of the prompt itself, a cycle at any depth, nesting deeper
 * than 5, a missing section, and an expanded text longer than a section may be.
 */
export async function resolveIncludes(
  tx: ProjectStore,
  selfId: string | undefined,
  sections: readonly Section[],
  found: readonly FoundInclude[],
  given: IncludePins,
  limits: ContentLimits,
  field: string,
  /** What names a given pin's field (`includes.safety`): nothing before it but in an import's `versions[i].`. */
  pinsField = "",
): Promise<Resolution> {
  const pins: IncludePins = {};
  const rows: VersionIncludes["pins"] = [];
  const views: IncludeView[] = [];
  const texts = new Map<string, string>();
  const reached = new Set<string>();
  let depth = 0;
  const max = limits.sectionContentLength;
  for (const include of found) {
    const name = `${field}sections[${include.at}].content: include "${include.reference}"`;
    if (include.prompt === selfId) throw badRequest(`${name}: a prompt cannot include itself`);
    const hash = await pinOf(tx, include, given[include.reference], name, `${pinsField}includes.${include.reference}`);
    const pinned = (await tx.includes().pinnedVersion(include.prompt, hash)) as PinnedVersion;
    if (selfId !== undefined && pinned.prompts.includes(selfId)) {
      throw badRequest(
        `${name}: version ${shortHash(hash)} of ${include.prompt} includes ${selfId} itself (through its own includes), which would be a cycle`,
      );
    }
    if (pinned.depth + 1 > MAX_INCLUDE_DEPTH) {
      throw badRequest(
        `${name}: version ${shortHash(hash)} of ${include.prompt} nests includes ${pinned.depth} deep; an include may nest at most ${MAX_INCLUDE_DEPTH} deep`,
      );
    }
    const text = includedText(await pinnedSections(tx, include.prompt, hash, pinned), include.section);
    if (text === undefined) {
      throw badRequest(
        `${name}: version ${shortHash(hash)} of ${include.prompt} has no enabled section titled ${JSON.stringify(include.section)}`,
      );
    }
    if (text.length > max) {
      throw badRequest(`${name}: takes ${text.length} characters; a section holds at most ${max}`);
    }
    depth = Math.max(depth, pinned.depth + 1);
    reached.add(include.prompt);
    for (const id of pinned.prompts) reached.add(id);
    pins[include.reference] = hash;
    texts.set(include.reference, text);
    rows.push({ reference: include.reference, pointer: include.pointer, prompt: include.prompt, hash });
    views.push({
      include: include.reference,
      prompt: include.prompt,
      section: include.section ?? null,
      pointer: include.pointer,
      version: hash,
    });
  }
  for (const [i, section] of sections.entries()) {
    if (expandedLength(section.content, texts) > max) {
      throw badRequest(`${field}sections[${i}].content: with its includes expanded, must be at most ${max} characters`);
    }
  }
  return {
    pins,
    includes: { pins: rows, depth, prompts: [...reached].sort() },
    expansion: { texts, views },
  };
}

/** The full hash an include takes: the pin given for it (checked), else what its pointer names now. */
async function pinOf(
  tx: ProjectStore,
  include: FoundInclude,
  given: string | undefined,
  name: string,
  field: string,
): Promise<string> {
  const { prompt, pointer } = include;
  const row = await tx.getPrompt(prompt);
  if (!row) throw badRequest(`${name}: unknown prompt`);
  if (given !== undefined) {
    if (!(await tx.holdsVersion(prompt, given))) throw badRequest(`${field}: prompt ${prompt} has no version ${given}`);
    if (isFixedPointer(pointer) && !given.startsWith(pointer)) {
      throw badRequest(`${field}: is not the version ${pointer} the include names`);
    }
    return given;
  }
  // As a read resolves it: production, else latest while nothing is published.
  if (pointer === PRODUCTION) return row.production_version ?? row.latest_version;
  if (pointer === "latest") return row.latest_version;
  if (isFixedPointer(pointer)) {
    const matches = await tx.findHashesByPrefix(prompt, pointer);
    if (matches.length === 0) throw badRequest(`${name}: prompt ${prompt} has no version ${pointer}`);
    if (matches.length > 1) {
      throw badRequest(`${name}: ${pointer} matches more than one version of ${prompt}; give more characters`);
    }
    return matches[0] as string;
  }
  const labelled = (await tx.labels().labelsOf(prompt)).get(pointer);
  if (labelled === undefined) throw badRequest(`${name}: prompt ${prompt} has no version labelled ${pointer}`);
  return labelled;
}

/** A pinned version's sections as its reads serve them (expanded), from its document or, before documents, its rows. */
async function pinnedSections(
  tx: ProjectStore,
  prompt: string,
  hash: string,
  pinned: PinnedVersion,
): Promise<Section[]> {
  if (pinned.sectionsJson !== null) return JSON.parse(pinned.sectionsJson) as Section[];
  return (await tx.getVersionContent(prompt, hash)).sections;
}
