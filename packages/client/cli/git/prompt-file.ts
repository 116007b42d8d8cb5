import { AppError } from "@promptstore/core/errors";
import type { Content, Section } from "@promptstore/core/prompts/content";
import { contentHash } from "@promptstore/core/prompts/hash";
import type { IncludePins } from "@promptstore/core/prompts/includes";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { modelSettingsInput } from "@promptstore/core/prompts/model-settings";
import {
  describeZodError,
  promptDescription,
  promptId,
  promptName,
  sectionsInput,
  toolsInput,
} from "@promptstore/core/schemas";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { CliError } from "../output.js";

/** A prompt as one file holds it: what `push` sends and `pull` writes. */
export interface PromptFile {
  id: string;
  name: string;
  description: string;
  content: Content;
  /**
   * The pins of its includes (docs/includes.md): reference → full hash, from the lockfile or the server. Not
   * written in the file, which shows each include as written (`{{> safety}}`); absent when it has none.
   */
  pins?: IncludePins;
}

type DisabledEntry = string | { title: string; occurrence: number };

const disabledEntry = z.union([z.string(), z.strictObject({ title: z.string(), occurrence: z.number().int().min(1) })]);

const frontMatter = z.strictObject({
  id: promptId,
  name: promptName,
  description: promptDescription.optional(),
  disabled: z.array(disabledEntry).optional(),
  tools: toolsInput.optional(),
  model: modelSettingsInput.optional(),
  // Content Markdown cannot carry exactly (see renderPromptFile) is written here instead of the body.
  sections: sectionsInput.optional(),
});

/**
 * A file's content as the API takes a version: what `push` saves, and what `eval` sends as a draft, so that a
 * draft evaluated is answered under the hash the push would save (`fileHash`). `model` only when the file has
 * settings: a version without them is another version.
 */
export function versionContent(file: PromptFile): Content {
  return {
    sections: file.content.sections,
    tools: file.content.tools,
    ...(file.content.model !== undefined ? { model: file.content.model } : {}),
  };
}

/**
 * The hash of the version a file describes: the service's own algorithm, computed offline. With includes, it
 * covers their pins (the lockfile's), so a file pushed unchanged is the version it was pulled from.
 */
export function fileHash(file: PromptFile): string {
  const pins = file.pins;
  return contentHash(pins && Object.keys(pins).length > 0 ? { ...file.content, includes: pins } : file.content);
}

function markdownBody(sections: readonly Section[]): string {
  return sections.map((s) => (s.content === "" ? `# ${s.title}` : `# ${s.title}\n\n${s.content}`)).join("\n\n");
}

/** Titles that occur once are named as they are; a repeated title also by its occurrence (1-based). */
function disabledEntries(sections: readonly Section[]): DisabledEntry[] {
  const counts = new Map<string, number>();
  for (const s of sections) counts.set(s.title, (counts.get(s.title) ?? 0) + 1);
  const seen = new Map<string, number>();
  const entries: DisabledEntry[] = [];
  for (const s of sections) {
    const occurrence = (seen.get(s.title) ?? 0) + 1;
    seen.set(s.title, occurrence);
    if (s.enabled) continue;
    entries.push((counts.get(s.title) ?? 0) > 1 ? { title: s.title, occurrence } : s.title);
  }
  return entries;
}

function render(file: PromptFile, asMarkdown: boolean): string {
  const front: Record<string, unknown> = { id: file.id, name: file.name };
  if (file.description !== "") front.description = file.description;
  if (asMarkdown) {
    const disabled = disabledEntries(file.content.sections);
    if (disabled.length > 0) front.disabled = disabled;
  } else {
    front.sections = file.content.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled }));
  }
  if (file.content.tools.length > 0) front.tools = file.content.tools;
  if (file.content.model !== undefined) front.model = file.content.model;
  const yaml = stringify(front, { lineWidth: 0 });
  return asMarkdown ? `---\n${yaml}---\n\n${markdownBody(file.content.sections)}\n` : `---\n${yaml}---\n`;
}

/** Whether a file read back says what was written (its pins are not in the text, so not compared). */
function same(a: PromptFile, b: PromptFile): boolean {
  return (
    a.id === b.id &&
    a.name === b.name &&
    a.description === b.description &&
    contentHash(a.content) === contentHash(b.content)
  );
}

/**
 * The file for a prompt: YAML front matter, then every section as `# Title` and its content. The result is
 * parsed back before it is returned; where Markdown cannot say the content exactly (a section whose content
 * has a top-level `# ` line, leading or trailing blank lines, an unclosed code fence; a title with
 * surrounding spaces), the sections go into the front matter instead, so that a pull never changes a hash.
 */
export function renderPromptFile(file: PromptFile): string {
  for (const asMarkdown of [true, false]) {
    const text = render(file, asMarkdown);
    try {
      if (same(parsePromptFile(text, `${file.id}.md`), file)) return text;
    } catch {
      // Not representable this way: try the next.
    }
  }
  throw new CliError(`prompt ${file.id}: cannot be written as a file that reads back identically`);
}

/** What every prompt file's front matter must say; the rest (description, tools, model, disabled, sections) is optional. */
const REQUIRED_KEYS = ["id", "name"] as const;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A new file is often written by hand: name what is missing, and show the smallest front matter that works. */
function missingKeysMessage(missing: readonly string[]): string {
  return (
    `front matter: missing ${missing.join(" and ")}; every prompt file needs id (the prompt's slug: lowercase ` +
    'letters, digits, _ and -, e.g. "id: support-bot") and name ("name: Support Bot"); description, tools and ' +
    "disabled are optional"
  );
}

function problem(fileName: string, message: string): CliError {
  return new CliError(`${fileName}: ${message}`);
}

function applyDisabled(sections: Section[], entries: DisabledEntry[], fileName: string): void {
  for (const entry of entries) {
    const title = typeof entry === "string" ? entry : entry.title;
    const matching = sections.filter((s) => s.title === title);
    if (matching.length === 0) throw problem(fileName, `disabled: no section is titled ${JSON.stringify(title)}`);
    let target: Section | undefined;
    if (typeof entry === "string") {
      if (matching.length > 1) {
        throw problem(
          fileName,
          `disabled: ${matching.length} sections are titled ${JSON.stringify(title)}; name one as { title, occurrence }`,
        );
      }
      target = matching[0];
    } else {
      target = matching[entry.occurrence - 1];
      if (!target)
        throw problem(fileName, `disabled: there is no occurrence ${entry.occurrence} of ${JSON.stringify(title)}`);
    }
    (target as Section).enabled = false;
  }
}

/** Reads a prompt file; every mistake is named with the file and the field. */
export function parsePromptFile(text: string, fileName: string): PromptFile {
  const source = text.replace(/\r\n?/g, "\n");
  if (!source.startsWith("---\n")) throw problem(fileName, "must start with YAML front matter (a line ---)");
  const end = source.indexOf("\n---\n", 3);
  const endAtEof = source.endsWith("\n---") ? source.length - 4 : -1;
  const close = end >= 0 ? end : endAtEof;
  if (close < 0) throw problem(fileName, "front matter is not closed by a line ---");
  const yamlText = source.slice(4, close + 1);
  const body = source.slice(close + 5);
  let raw: unknown;
  try {
    raw = parse(yamlText);
  } catch (error) {
    throw problem(fileName, `front matter is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const missing = REQUIRED_KEYS.filter((key) => !isRecord(raw) || raw[key] === undefined || raw[key] === null);
  if (missing.length > 0) throw problem(fileName, missingKeysMessage(missing));
  const checked = frontMatter.safeParse(raw ?? {});
  if (!checked.success) throw problem(fileName, describeZodError(checked.error, "front matter"));
  const meta = checked.data;
  let sections: Section[];
  if (meta.sections !== undefined) {
    if (body.trim() !== "") throw problem(fileName, "sections are given in the front matter; the body must be empty");
    if (meta.disabled !== undefined) throw problem(fileName, "disabled: set enabled on the front matter's sections");
    sections = meta.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled ?? true }));
  } else {
    try {
      sections = markdownToSections(body);
    } catch (error) {
      if (error instanceof AppError) throw problem(fileName, error.message);
      throw error;
    }
    const limits = sectionsInput.safeParse(sections);
    if (!limits.success) throw problem(fileName, describeZodError(limits.error, "sections"));
    applyDisabled(sections, meta.disabled ?? [], fileName);
  }
  return {
    id: meta.id,
    name: meta.name,
    description: meta.description ?? "",
    content: { sections, tools: meta.tools ?? [], ...(meta.model !== undefined ? { model: meta.model } : {}) },
  };
}
