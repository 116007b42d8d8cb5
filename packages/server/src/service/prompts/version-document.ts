import { assemble, withGuard } from "@promptstore/core/prompts/assemble";
import type { ModelSettings, SectionWithId, Tool } from "@promptstore/core/prompts/content";
import { modelJson } from "@promptstore/core/prompts/hash";
import { extractVariables } from "@promptstore/core/prompts/variables";
import type { VersionDocument } from "../../store/prompts/prompt-rows.js";

/**
 * The document of a version, computed once when it is saved (versions never change). Sections are
 * serialized with their keys in the order every read has always returned them.
 */
export function versionDocument(
  sections: readonly SectionWithId[],
  tools: readonly Tool[],
  model: ModelSettings | undefined,
): VersionDocument {
  return {
    textJson: JSON.stringify(assemble(sections)),
    variablesJson: JSON.stringify(extractVariables(sections)),
    sectionsJson: JSON.stringify(
      sections.map((s) => ({ id: s.id, title: s.title, content: s.content, enabled: s.enabled })),
    ),
    toolsJson: JSON.stringify(tools),
    modelJson: model === undefined ? null : modelJson(model),
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
