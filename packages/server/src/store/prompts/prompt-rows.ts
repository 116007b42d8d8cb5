import type { Content, ModelSettings, SectionWithId, Tool } from "@promptstore/core/prompts/content";
import type { IncludePins } from "@promptstore/core/prompts/includes";
import type { PromptsTable } from "../schema.js";

/**
 * The rows of prompts and versions as the store reads and writes them, and the columns it reads them with.
 */

export type PromptRow = Omit<PromptsTable, "project_id">;

/** A prompt's pointer ages and served variables, for the dashboard's list (ProjectStore.listSummaries). */
export interface PromptListSummary {
  id: string;
  production_saved_at: string | null;
  latest_saved_at: string;
  /** The served version's variables as JSON; null for a version saved before documents were. */
  variables_json: string | null;
}

export interface VersionRow {
  hash: string;
  message: string | null;
  created_at: string;
  saved_by: string | null;
}

/** A version's content as written: its sections with their ids, its tools, model settings and pins. */
export interface VersionContent {
  sections: SectionWithId[];
  tools: Tool[];
  model?: ModelSettings | undefined;
  includes?: IncludePins | undefined;
}

/**
 * A version's includes as the store keeps them beside its content's pins (docs/includes.md): one row per
 * include, how deep they nest, and every prompt they reach.
 */
export interface VersionIncludes {
  pins: { reference: string; pointer: string; prompt: string; hash: string }[];
  depth: number;
  /** Sorted. */
  prompts: string[];
}

/** A version ready to insert: its hash, history, content as written, sections with ids, and read document. */
export interface NewVersion {
  hash: string;
  message: string | null;
  created_at: string;
  saved_by: string;
  content: Content;
  sections: SectionWithId[];
  document: VersionDocument;
  /** Present exactly when the content has pins. */
  includes?: VersionIncludes | undefined;
}

/**
 * Everything a read of a version returns that depends on the version alone, stored with it (versions are
 * immutable), as JSON ready to be spliced into a response: the assembled text without the guard (a JSON
 * string), its variables, its sections (with ids) and its tools.
 */
export interface VersionDocument {
  textJson: string;
  variablesJson: string;
  sectionsJson: string;
  /** `[]` when the version has no tools. */
  toolsJson: string;
  /** The model settings as canonical JSON; null when the version has none. */
  modelJson: string | null;
  /** Its includes as reads show them (a JSON array); null when it has none. */
  includesJson: string | null;
}

/**
 * A prompt with one of its versions, as a read finds them; `document` is null for a version saved before
 * documents were stored (migration 004).
 */
export interface PromptAndVersion {
  prompt: PromptRow;
  version: { hash: string; document: VersionDocument | null };
  /** The prompt's labels but production, `{name: hash}` in name order (`{}` when none), as JSON. */
  labelsJson: string;
  /** The prompt's rollouts, `{label: [candidate, percent]}` (`{}` when none), as JSON. */
  rolloutsJson: string;
}

export type DocumentColumns = {
  text_json: string | null;
  variables_json: string | null;
  sections_json: string | null;
  tools_json: string | null;
  model: string | null;
  includes_json: string | null;
};

export function documentOf(row: DocumentColumns): VersionDocument | null {
  const { text_json, variables_json, sections_json, tools_json, model, includes_json } = row;
  if (text_json === null || variables_json === null || sections_json === null || tools_json === null) return null;
  return {
    textJson: text_json,
    variablesJson: variables_json,
    sectionsJson: sections_json,
    toolsJson: tools_json,
    modelJson: model,
    includesJson: includes_json,
  };
}

export function promptOf(row: PromptRow): PromptRow {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    production_version: row.production_version,
    latest_version: row.latest_version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const READ_COLUMNS = [
  "p.id",
  "p.name",
  "p.description",
  "p.production_version",
  "p.latest_version",
  "p.created_at",
  "p.updated_at",
  "v.hash",
  "v.text_json",
  "v.variables_json",
  "v.sections_json",
  "v.tools_json",
  "v.model",
  "v.includes_json",
] as const;

export const PROMPT_COLUMNS = [
  "id",
  "name",
  "description",
  "production_version",
  "latest_version",
  "created_at",
  "updated_at",
] as const;

export const toSection = (row: {
  section_id: string;
  title: string;
  content: string;
  enabled: number;
}): SectionWithId => ({
  id: row.section_id,
  title: row.title,
  content: row.content,
  enabled: Boolean(row.enabled),
});

export const documentColumns = (document: VersionDocument): DocumentColumns => ({
  text_json: document.textJson,
  variables_json: document.variablesJson,
  sections_json: document.sectionsJson,
  tools_json: document.toolsJson,
  model: document.modelJson,
  includes_json: document.includesJson,
});
