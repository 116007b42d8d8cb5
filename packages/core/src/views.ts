import type { SectionWithId, Tool } from "./content.js";

export type Label = "production" | "latest" | "version";

/** The full read of a prompt (spec section 2). */
export interface PromptView {
  id: string;
  name: string;
  description: string;
  prompt: string;
  sections: SectionWithId[];
  tools?: Tool[];
  variables: string[];
  version: string;
  label: Label;
  production_version: string | null;
  created_at: string;
  updated_at: string;
}

export interface PromptListItem {
  id: string;
  name: string;
  description: string;
  production_version: string | null;
  latest_version: string;
  created_at: string;
  updated_at: string;
}

export interface PromptList {
  project: { id: string; name: string };
  prompts: PromptListItem[];
  next_cursor?: string | null;
}

export interface CreatedPrompt {
  id: string;
  name: string;
  version: string;
  published: boolean;
  created_at: string;
}

export interface SavedVersion {
  id: string;
  version: string;
  created: boolean;
  published: boolean;
}

export interface PublishedVersion {
  id: string;
  version: string;
  published: boolean;
}

/** The answer to a deletion: the prompt, its versions and pointers are gone, and its id is free again. */
export interface DeletedPrompt {
  id: string;
  deleted: true;
}

export interface VersionList {
  id: string;
  production_version: string | null;
  latest_version: string;
  versions: {
    version: string;
    message: string | null;
    created_at: string;
    /** Who saved it: `user:<e-mail>` or `key:<key prefix>`; null for versions saved before this was recorded. */
    saved_by: string | null;
  }[];
}
