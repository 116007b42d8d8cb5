import type { Section } from "./content.js";

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** Every `{{ name }}` in the enabled sections, each once, in order of first appearance. */
export function extractVariables(sections: readonly Section[]): string[] {
  const seen = new Set<string>();
  for (const section of sections) {
    if (!section.enabled) continue;
    for (const match of section.content.matchAll(VARIABLE)) seen.add(match[1] as string);
  }
  return [...seen];
}

/**
 * Replaces each `{{ name }}` whose name is in `values`; unknown placeholders stay as written,
 * so a partly filled prompt still shows what is missing.
 */
export function fillVariables(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(VARIABLE, (whole, name: string) =>
    Object.hasOwn(values, name) ? (values[name] as string) : whole,
  );
}
