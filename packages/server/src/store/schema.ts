/** Row types of every table, as Kysely sees them. Timestamps are ISO 8601 strings in both dialects. */
export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  created_at: string;
}

export interface ProjectsTable {
  id: string;
  org_id: string;
  name: string;
  /** Kept by the create transaction itself so the plan limit holds under concurrent creates. */
  prompt_count: number;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  prefix: string;
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface PromptsTable {
  project_id: string;
  id: string;
  name: string;
  description: string;
  production_version: string | null;
  latest_version: string;
  created_at: string;
  updated_at: string;
}

export interface VersionsTable {
  project_id: string;
  prompt_id: string;
  hash: string;
  message: string | null;
  tool_count: number;
  created_at: string;
}

export interface VersionSectionsTable {
  project_id: string;
  prompt_id: string;
  hash: string;
  position: number;
  section_id: string;
  title: string;
  content: string;
  /** 0 or 1: one representation for both dialects. */
  enabled: number;
}

export interface VersionToolsTable {
  project_id: string;
  prompt_id: string;
  hash: string;
  position: number;
  name: string;
  /** The tool object as JSON text, exactly as it was hashed. */
  definition: string;
}

export interface Database {
  organizations: OrganizationsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  prompts: PromptsTable;
  versions: VersionsTable;
  version_sections: VersionSectionsTable;
  version_tools: VersionToolsTable;
}
