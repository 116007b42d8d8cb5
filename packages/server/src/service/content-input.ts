import type { Content, ModelSettings } from "@promptstore/core/content";
import { AppError } from "@promptstore/core/errors";
import { markdownToSections } from "@promptstore/core/markdown";
import { describeZodError, sectionsInput } from "@promptstore/core/schemas";

export interface ContentInput {
  sections?: { title: string; content: string; enabled?: boolean | undefined }[] | undefined;
  markdown?: string | undefined;
  tools?: Content["tools"] | undefined;
  /** Absent means the version has no model settings (and hashes as versions did before them). */
  model?: ModelSettings | undefined;
}

/** The one way written content (either form) becomes the Content that is hashed and stored. */
export function toContent(input: ContentInput): Content {
  const tools = input.tools ?? [];
  const model = input.model === undefined ? {} : { model: input.model };
  if (input.sections !== undefined) {
    return {
      sections: input.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled ?? true })),
      tools,
      ...model,
    };
  }
  const sections = markdownToSections(input.markdown ?? "");
  // Sections made from Markdown obey the same limits as written ones; the message names `markdown`.
  const checked = sectionsInput.safeParse(sections);
  if (!checked.success) throw new AppError("bad_request", `markdown: ${describeZodError(checked.error, "sections")}`);
  return { sections, tools, ...model };
}
