import type { Section } from "./content.js";

const NAME = "[A-Za-z_][A-Za-z0-9_.-]*";

/**
 * `{{ name }}`, spaces allowed inside the braces; the name is the first group. The one definition: the
 * dashboard highlights and marks placeholders with it (the client keeps a copy, pinned by its tests).
 */
export const VARIABLE_PATTERN = new RegExp(`\\{\\{\\s*(${NAME})\\s*\\}\\}`, "g");

/** A whole `{{ name }}` with no group, for splitting a text into placeholders and the rest. */
export const PLACEHOLDER_PATTERN = new RegExp(`\\{\\{\\s*${NAME}\\s*\\}\\}`, "g");

/** Every `{{ name }}` in the enabled sections, each once, in order of first appearance. */
export function extractVariables(sections: readonly Section[]): string[] {
  const seen = new Set<string>();
  for (const section of sections) {
    if (!section.enabled) continue;
    for (const match of section.content.matchAll(VARIABLE_PATTERN)) seen.add(match[1] as string);
  }
  return [...seen];
}

/**
 * Replaces each `{{ name }}` whose name is in `values`; unknown placeholders stay as written,
 * so a partly filled prompt still shows what is missing.
 */
export function fillVariables(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(VARIABLE_PATTERN, (whole, name: string) =>
    Object.hasOwn(values, name) ? (values[name] as string) : whole,
  );
}
