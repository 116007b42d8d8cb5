import { PRODUCTION } from "@promptstore/core/labels";
import { findIncludes, type IncludePins, isFixedPointer, parseInclude } from "@promptstore/core/prompts/includes";
import type { PromptListItem, PromptView } from "../../src/index.js";
import { api, type RemoteOptions, short } from "./connection.js";
import type { Lock, LockEntry } from "./lockfile.js";

/**
 * Includes in git (docs/includes.md, docs/git.md): a prompt file shows each include as written
 * (`{{> safety}}`), and the lockfile records its pin, reference → full hash, so that the file hashes (and
 * pushes) as the version it was pulled from, and `check --includes` can tell a pin behind its pointer.
 */

/** The pins of a read (its `includes`), or undefined for a version without includes. */
export function pinsOfView(view: Pick<PromptView, "includes">): IncludePins | undefined {
  if (view.includes === undefined || view.includes.length === 0) return undefined;
  return Object.fromEntries(view.includes.map((i) => [i.include, i.version]));
}

/** The references sections write, in order (none when one does not parse: the server names it on push). */
export function writtenReferences(sections: readonly { content: string }[]): string[] {
  const found = findIncludes(sections);
  return "problem" in found ? [] : found.includes.map((i) => i.reference);
}

/**
 * The lockfile's pins of the references a file still writes: what its hash covers and what push sends back,
 * so that an edit elsewhere never moves a pin. Undefined when none is known.
 */
export function lockedPins(
  entry: LockEntry | undefined,
  sections: readonly { content: string }[],
): IncludePins | undefined {
  if (entry?.includes === undefined) return undefined;
  const pins: IncludePins = {};
  for (const reference of writtenReferences(sections)) {
    const hash = entry.includes[reference];
    if (hash !== undefined) pins[reference] = hash;
  }
  return Object.keys(pins).length > 0 ? pins : undefined;
}

/** The pins the server gave a version (after a push that may have pinned new includes). */
export async function serverPins(options: RemoteOptions, id: string, version: string): Promise<IncludePins> {
  const path = `/api/v2/prompts/${encodeURIComponent(id)}/includes?version=${version}`;
  const answer = (await api(options, "GET", path)) as { includes: { include: string; version: string }[] };
  return Object.fromEntries(answer.includes.map((i) => [i.include, i.version]));
}

/** A pin of the lockfile behind the pointer it follows (`check --includes`). */
export interface IncludeDifference {
  id: string;
  include: string;
  pointer: string;
  pinned: string;
  /** What the pointer names on the server now; null when its prompt or label is gone. */
  current: string | null;
}

/** What a pointer of a prompt names now, as a save would pin it: production (else latest), latest, a label. */
function pointsTo(prompt: PromptListItem | undefined, pointer: string): string | null {
  if (prompt === undefined) return null;
  if (pointer === PRODUCTION) return prompt.production_version ?? prompt.latest_version;
  if (pointer === "latest") return prompt.latest_version;
  return prompt.labels?.[pointer] ?? null;
}

/**
 * Every pin of the lockfile whose pointer names another version on the server now, from the one listing
 * `check` reads already. An include of a hash never moves, so it is never behind.
 */
export function includeDifferences(lock: Lock, remote: Map<string, PromptListItem>): IncludeDifference[] {
  const differences: IncludeDifference[] = [];
  for (const id of [...lock.keys()].sort()) {
    for (const [include, pinned] of Object.entries(lock.get(id)?.includes ?? {})) {
      const parsed = parseInclude(include);
      if ("problem" in parsed || isFixedPointer(parsed.pointer)) continue;
      const current = pointsTo(remote.get(parsed.prompt), parsed.pointer);
      if (current !== pinned) differences.push({ id, include, pointer: parsed.pointer, pinned, current });
    }
  }
  return differences;
}

export function describeIncludeDifferences(differences: IncludeDifference[]): string {
  return differences
    .map((d) => {
      const now =
        d.current === null
          ? `which names nothing now (the prompt or the label is gone)`
          : `which names ${short(d.current)} now`;
      return `${d.id}: include ${d.include} is pinned to ${short(d.pinned)}, behind ${d.pointer}, ${now}`;
    })
    .join("\n");
}
