import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { Generated } from "kysely";
import type {
  DatasetCasesTable,
  DatasetsTable,
  DatasetVersionCasesTable,
  DatasetVersionsTable,
  EvaluationAnswersTable,
  EvaluationDefaultsTable,
  EvaluationErrorsTable,
  EvaluationsTable,
  EvaluationVerdictsTable,
} from "./evaluations/tables.js";
import type {
  FleetInstancesTable,
  LabelHistoryTable,
  OutcomeCountsTable,
  OutcomeLatencyTable,
  OutcomeSeriesTable,
  RolloutPlansTable,
} from "./outcomes/tables.js";

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
  /** Written at most once a minute per key and instance: a read must not pay for a write. */
  last_used_at: string | null;
  scope: KeyScope;
}

export interface AuditLogTable {
  id: Generated<number | string>;
  org_id: string;
  /** Null for an organization's change (a plan change), shown in each of its projects' trails. */
  project_id: string | null;
  at: string;
  actor: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
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
  /** `user:<e-mail>` or `key:<prefix>`; null for versions saved before it was recorded. */
  saved_by: string | null;
  /**
   * The version's document (migration 004), computed when it is saved, as JSON: the assembled text
   * without the guard (a JSON string), its variables, its sections with their ids, and its tools (`[]`
   * when none).
   * All four are null for a version saved before they existed, until its first read fills them in.
   */
  text_json: string | null;
  variables_json: string | null;
  sections_json: string | null;
  tools_json: string | null;
  /** The model settings as canonical JSON (migration 011), null when the version has none. */
  model: string | null;
  /** Migration 027 (docs/includes.md): the includes as reads show them (JSON array); null when none. */
  includes_json: string | null;
  /** How deep its includes nest (1: it includes prompts that include none); null when it has none. */
  include_depth: number | null;
  /** Every prompt its includes reach, at any depth (JSON array of ids, sorted); null when none. */
  included_prompts: string | null;
}

/** One include of a version (migration 027): its pin, and what it follows, for the used-by graph. */
export interface VersionIncludesTable {
  project_id: string;
  prompt_id: string;
  hash: string;
  position: number;
  /** The include's reference as written (`safety#Voice@staging`). */
  reference: string;
  /** production (also when not written), latest, a label, or the hash or prefix written. */
  pointer: string;
  included_prompt_id: string;
  included_hash: string;
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

export interface UsersTable {
  id: string;
  email: string;
  /** `scrypt$N$r$p$salt$hash`, parameters kept with the hash so they can be raised later. */
  password_hash: string;
  must_change_password: number;
  created_at: string;
}

/** An owner's invitation to an organization (migration 015): pending until accepted, revoked or expired. */
export interface InvitationsTable {
  id: string;
  org_id: string;
  email: string;
  role: string;
  /** SHA-256 of the link's token. */
  token_hash: string;
  /** The actor who invited: `user:<e-mail>` or `cli`. */
  invited_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  /** The user who accepted. */
  accepted_by: string | null;
  revoked_at: string | null;
}

export interface MembershipsTable {
  org_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface SessionsTable {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export interface EventsTable {
  /** bigserial on PostgreSQL (read back as a string by pg), integer on SQLite: always through Number(). */
  id: Generated<number | string>;
  project_id: string;
  type: string;
  prompt_id: string;
  version: string;
  production_version: string | null;
  latest_version: string | null;
  created_at: string;
  /** Migration 008: the label, previous version, rollout or release request, as JSON; null before. */
  details: string | null;
}

export interface EventHorizonTable {
  id: number;
  pruned_through: number | string;
}

/** Migration 006. The secret is kept as is: see WebhookStore for why. */
export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  description: string;
  /** JSON array of event types. */
  event_types: string;
  /** 0 or 1. */
  enabled: number;
  /** Sealed with the server's secret key (`enc:v1:…`, context `webhook:<id>`); plain only before the start-up step seals it. */
  secret: string;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveriesTable {
  /** bigserial on PostgreSQL (a string from pg), integer on SQLite: always through Number(). */
  id: Generated<number | string>;
  endpoint_id: string;
  project_id: string;
  event_id: number | string;
  event_type: string;
  prompt_id: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  locked_until: string | null;
  lock_token: string | null;
  first_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** Migration 008: every label but production (which stays `prompts.production_version`). */
export interface PromptLabelsTable {
  project_id: string;
  prompt_id: string;
  name: string;
  version: string;
  updated_at: string;
}

/** Migration 008: a gradual rollout on a label (production included): the candidate and its share. */
export interface RolloutsTable {
  project_id: string;
  prompt_id: string;
  label: string;
  candidate: string;
  percent: number;
  started_at: string;
}

/** Migration 008: per project and label name. */
export interface LabelSettingsTable {
  project_id: string;
  name: string;
  description: string;
  /** 0 or 1. */
  protected: number;
  fallback: string | null;
  updated_at: string;
  /** Migration 023: the required evaluation's JSON (null: none), its hash, and whether rollbacks pass. */
  requirement: string | null;
  requirement_hash: string | null;
  rollback_allowed: Generated<number>;
}

/** Migration 008. */
export interface ReleaseRequestsTable {
  id: string;
  project_id: string;
  prompt_id: string;
  label: string;
  version: string;
  from_version: string | null;
  percent: number | null;
  message: string;
  status: string;
  requested_by: string;
  requested_at: string;
  decided_by: string | null;
  decided_at: string | null;
  comment: string | null;
  /** JSON: the plan (steps, guardrails) the approval starts; null for a plain move or rollout (migration 028). */
  plan: string | null;
}

export interface Database {
  organizations: OrganizationsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  prompts: PromptsTable;
  versions: VersionsTable;
  version_sections: VersionSectionsTable;
  version_tools: VersionToolsTable;
  version_includes: VersionIncludesTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  events: EventsTable;
  event_horizon: EventHorizonTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  audit_log: AuditLogTable;
  prompt_labels: PromptLabelsTable;
  rollouts: RolloutsTable;
  label_settings: LabelSettingsTable;
  release_requests: ReleaseRequestsTable;
  secret_key_check: SecretKeyCheckTable;
  invitations: InvitationsTable;
  model_connections: ModelConnectionsTable;
  prompt_examples: PromptExamplesTable;
  example_results: ExampleResultsTable;
  oauth_clients: OAuthClientsTable;
  oauth_requests: OAuthRequestsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_tokens: OAuthTokensTable;
  datasets: DatasetsTable;
  dataset_versions: DatasetVersionsTable;
  dataset_cases: DatasetCasesTable;
  dataset_version_cases: DatasetVersionCasesTable;
  evaluations: EvaluationsTable;
  evaluation_answers: EvaluationAnswersTable;
  evaluation_verdicts: EvaluationVerdictsTable;
  evaluation_errors: EvaluationErrorsTable;
  evaluation_defaults: EvaluationDefaultsTable;
  outcome_series: OutcomeSeriesTable;
  outcome_counts: OutcomeCountsTable;
  outcome_latency: OutcomeLatencyTable;
  label_history: LabelHistoryTable;
  fleet_instances: FleetInstancesTable;
  rollout_plans: RolloutPlansTable;
}

/** A project's OpenAI-compatible API (migration 016); `api_key` is sealed with the server's secret key. */
export interface ModelConnectionsTable {
  id: string;
  project_id: string;
  name: string;
  base_url: string;
  api_key: string | null;
  /** JSON array of model names. */
  models: string;
  created_at: string;
  updated_at: string;
}

export interface PromptExamplesTable {
  id: string;
  project_id: string;
  prompt_id: string;
  name: string;
  /** JSON object. */
  variables: string;
  /** JSON array of chat messages. */
  messages: string;
  good_answer: string | null;
  created_at: string;
  updated_at: string;
}

/** A kept result: one per (example, version hash, settings hash). */
export interface ExampleResultsTable {
  example_id: string;
  project_id: string;
  prompt_id: string;
  version: string;
  settings_hash: string;
  settings: string;
  answer: string;
  finish_reason: string | null;
  usage: string | null;
  ttft_ms: number | null;
  total_ms: number;
  ran_at: string;
  /** 1 when the result came in through an import (migration 017): not run here, never kept for a run. */
  imported: number;
}

/** One row sealed with the server's secret key (migration 010); never backed up. */
export interface SecretKeyCheckTable {
  id: number;
  key_id: string;
  sealed: string;
}

/** MCP authorization (migration 020): clients, pending requests and their codes, grants and their tokens. */
export interface OAuthClientsTable {
  id: string;
  kind: "registered" | "document";
  name: string;
  /** JSON array. */
  redirect_uris: string;
  /** JSON object. */
  metadata: string;
  created_at: string;
  expires_at: string | null;
}

export interface OAuthRequestsTable {
  id: string;
  client_id: string;
  redirect_uri: string;
  state: string;
  code_challenge: string;
  scope: string | null;
  resource: string;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  code_hash: string | null;
  code_expires_at: string | null;
  user_id: string | null;
  project_id: string | null;
  granted_scope: KeyScope | null;
  used_at: string | null;
  grant_id: string | null;
}

export interface OAuthGrantsTable {
  id: string;
  user_id: string;
  org_id: string;
  project_id: string;
  scope: KeyScope;
  client_id: string;
  client_name: string;
  resource: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  grant_id: string;
  kind: "access" | "refresh";
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export type {
  DatasetCasesTable,
  DatasetsTable,
  DatasetVersionCasesTable,
  DatasetVersionsTable,
  EvaluationAnswersTable,
  EvaluationDefaultsTable,
  EvaluationErrorsTable,
  EvaluationsTable,
  EvaluationVerdictsTable,
  FleetInstancesTable,
  LabelHistoryTable,
  OutcomeCountsTable,
  OutcomeLatencyTable,
  OutcomeSeriesTable,
  RolloutPlansTable,
};
