import type { Section } from "./content.js";
import { tagName } from "./tag-name.js";

/** The prompt text: each enabled section as `<Tag>\n{content}\n</Tag>`, joined by one blank line. */
export function assemble(sections: readonly Section[]): string {
  return sections
    .filter((s) => s.enabled)
    .map((s) => {
      const tag = tagName(s.title);
      return `<${tag}>\n${s.content}\n</${tag}>`;
    })
    .join("\n\n");
}

/** The guarded text starts with the unguarded text, so a client can always strip the guard off. */
export function withGuard(text: string, guardText: string): string {
  return text === "" ? guardText : `${text}\n\n${guardText}`;
}
