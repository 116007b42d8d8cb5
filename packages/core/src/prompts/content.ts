import type { IncludePins } from "./includes.js";
import type { ModelSettings } from "./model-settings.js";

export type { ModelSettings } from "./model-settings.js";

/** The content of a version: what is hashed, stored immutably and assembled. */
export interface Section {
  title: string;
  content: string;
  enabled: boolean;
}

export interface Tool {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters: Record<string, unknown>;
  };
}

export interface Content {
  sections: Section[];
  tools: Tool[];
  /** The model settings; absent (never null) when the version has none, so it hashes as before them. */
  model?: ModelSettings | undefined;
  /**
   * The pins of its includes (includes.ts): each include's reference to the full hash it took when saved.
   * Absent (never empty) when the version has none, so it hashes as before includes.
   */
  includes?: IncludePins | undefined;
}

/** A section as read back: the stored section plus its deterministic id. */
export interface SectionWithId extends Section {
  id: string;
}
