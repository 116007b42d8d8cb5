import { assemble, withGuard } from "@promptstore/core/prompts/assemble";
import type { ModelSettings, SectionWithId, Tool } from "@promptstore/core/prompts/content";
import { modelJson } from "@promptstore/core/prompts/hash";
import { expandIncludes } from "@promptstore/core/prompts/includes";
import { extractVariables } from "@promptstore/core/prompts/variables";
import type { IncludeView, SectionView } from "@promptstore/core/views";
import type { VersionDocument } from "../../store/prompts/prompt-rows.js";

/** A version's includes at its save: each include's text by reference, and the includes as reads show them. */
export interface Expansion {
  texts: ReadonlyMap<string, string>;
  views: IncludeView[];
}

/**
 * The document of a version, computed once when it is saved (versions never change). Sections are
 * serialized with their keys in the order every read has always returned them. With includes
 * (docs/includes.md), every read serves the sections expanded, each with its written `source` after the
 * others when it differs; the text and the variables are those of the expanded sections. The pins fix what
 * each include takes, so the document is a function of the version's hash like any other.
 */
export function versionDocument(
  sections: readonly SectionWithId[],
  tools: readonly Tool[],
  model: ModelSettings | undefined,
  expansion?: Expansion,
): VersionDocument {
  const served: SectionView[] =
    expansion === undefined
      ? sections.map((s) => ({ id: s.id, title: s.title, content: s.content, enabled: s.enabled }))
      : sections.map((s) => {
          const content = expandIncludes(s.content, expansion.texts);
          const view: SectionView = { id: s.id, title: s.title, content, enabled: s.enabled };
          if (content !== s.content) view.source = s.content;
          return view;
        });
  return {
    textJson: JSON.stringify(assemble(served)),
    variablesJson: JSON.stringify(extractVariables(served)),
    sectionsJson: JSON.stringify(served),
    toolsJson: JSON.stringify(tools),
    modelJson: model === undefined ? null : modelJson(model),
    includesJson: expansion === undefined ? null : JSON.stringify(expansion.views),
  };
}

/**
 * Appends the guard to a text already in JSON, giving exactly `JSON.stringify(withGuard(text, guardText))`
 * without escaping the text again (the costliest step of a read). The guard's part is taken from
 * `withGuard` itself, which only ever appends to a non-empty text.
 */
export function guardJson(guardText: string): (textJson: string) => string {
  const alone = JSON.stringify(withGuard("", guardText));
  const suffix = JSON.stringify(withGuard("x", guardText)).slice(2);
  return (textJson) => (textJson === '""' ? alone : textJson.slice(0, -1) + suffix);
}
