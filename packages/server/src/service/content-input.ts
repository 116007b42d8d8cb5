import type { Content } from "@promptstore/core/content";
import { AppError } from "@promptstore/core/errors";
import { markdownToSections } from "@promptstore/core/markdown";
import { describeZodError, sectionsInput } from "@promptstore/core/schemas";

export interface ContentInput {
  sections?: { title: string; content: string; enabled?: boolean | undefined }[] | undefined;
  markdown?: string | undefined;
  tools?: Content["tools"] | undefined;
}

/** The one way written content (either form) becomes the Content that is hashed and stored. */
export function toContent(input: ContentInput): Content {
  const tools = input.tools ?? [];
  if (input.sections !== undefined) {
    return {
      sections: input.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled ?? true })),
      tools,
    };
  }
  const sections = markdownToSections(input.markdown ?? "");
  // Sections made from Markdown obey the same limits as written ones; the message names `markdown`.
  const checked = sectionsInput.safeParse(sections);
  if (!checked.success) throw new AppError("bad_request", `markdown: ${describeZodError(checked.error, "sections")}`);
  return { sections, tools };
}
