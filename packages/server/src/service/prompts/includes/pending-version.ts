import { badRequest } from "@promptstore/core/errors";
import { findIncludes, type IncludePins, MAX_INCLUDES_PER_VERSION } from "@promptstore/core/prompts/includes";
import type { NewVersion } from "../../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";
import type { Caller } from "../../access.js";
import { type ContentInput, toContent } from "../content-input.js";
import { versionOf } from "../prompt-changes.js";
import { resolveIncludes } from "./resolve.js";

/**
 * A version a create or save writes, before its includes are pinned: content without includes is a version
 * at once, exactly as before includes; content with them is pinned in the write's transaction, once the
 * prompts it includes are locked (resolve.ts).
 */
export interface PendingVersion {
  /** The prompts its includes name, to lock with the prompt written (none without includes). */
  pieces: string[];
  /** The version, its includes pinned in `tx`; `selfId` is the prompt written (when its id is known). */
  pin(tx: ProjectStore, selfId: string | undefined): Promise<NewVersion>;
}

/** Written content (either form), checked within the limits and for the syntax of its includes. */
export function pendingVersion(
  caller: Caller,
  body: ContentInput & { message?: string | undefined; includes?: IncludePins | undefined },
  at: string,
  limits: { sectionContentLength: number; markdownLength: number },
): PendingVersion {
  const content = toContent(body, limits);
  const history = { message: body.message ?? null, created_at: at, saved_by: caller.actor };
  // Messages name the field written: a section, or the Markdown the sections came from.
  const field = body.sections !== undefined ? "" : "markdown: ";
  const found = findIncludes(content.sections);
  if ("problem" in found) throw badRequest(`${field}sections[${found.section}].content: ${found.problem}`);
  const given = body.includes ?? {};
  const references = new Set(found.includes.map((i) => i.reference));
  for (const reference of Object.keys(given)) {
    if (!references.has(reference)) {
      throw badRequest(`includes.${reference}: the sections hold no include {{> ${reference}}}`);
    }
  }
  if (found.includes.length === 0) {
    const version = versionOf(content, history);
    return { pieces: [], pin: async () => version };
  }
  if (found.includes.length > MAX_INCLUDES_PER_VERSION) {
    throw badRequest(
      `${field}sections: hold ${found.includes.length} different includes; a version holds at most ${MAX_INCLUDES_PER_VERSION}`,
    );
  }
  return {
    pieces: [...new Set(found.includes.map((i) => i.prompt))],
    async pin(tx, selfId) {
      const resolution = await resolveIncludes(tx, selfId, content.sections, found.includes, given, limits, field);
      return versionOf(content, history, resolution);
    },
  };
}
