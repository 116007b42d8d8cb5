import type { RequirementBody } from "./evaluations/requirements.js";
import type { ModelSettings, SectionWithId, Tool } from "./prompts/content.js";
import type { PlanSpec } from "./rollouts/plan-view.js";

/** What resolved a read: the contract's three, or a label's name (docs/releases.md). */
export type Label = "production" | "latest" | "version" | (string & {});

/** A rollout as a read reports it: the candidate, its share, and the arm this read got. */
export interface RolloutView {
  candidate: string;
  percent: number;
  arm: "current" | "candidate";
}

/**
 * An include of a version as reads show it (docs/includes.md): what was written, what it names, and the
 * full hash it was pinned to when the version was saved.
 */
export interface IncludeView {
  /** The include's reference: `safety`, `safety@staging`, `tone#Voice@latest`. */
  include: string;
  /** The included prompt. */
  prompt: string;
  /** The one section taken, by title; null for the whole prompt (its enabled sections). */
  section: string | null;
  /** What the include follows: production (also when not written), latest, a label, or a hash or prefix. */
  pointer: string;
  /** The version it took: fixed when the including version was saved. */
  version: string;
}

/** An include of a version beside what its pointer names now: `outdated` when that is another version. */
export interface IncludeState extends IncludeView {
  /** What the pointer names now (a hash pointer: the pin itself); null when the prompt or label is gone. */
  current: string | null;
  outdated: boolean;
}

/** What a version of a prompt includes (`GET /api/v2/prompts/:id/includes`). */
export interface PromptIncludes {
  id: string;
  version: string;
  includes: IncludeState[];
}

/** A version of another prompt that pins this one, and what serves it (`GET /api/v2/prompts/:id/included-by`). */
export interface Dependent {
  /** The including prompt and its version. */
  prompt: string;
  version: string;
  /** What serves that version: production, latest, other labels (a rollout's candidate under its label). */
  labels: string[];
  include: string;
  pointer: string;
  /** The version of this prompt it took. */
  pinned: string;
  /** What the pointer names now; null when its label is gone. */
  current: string | null;
  outdated: boolean;
  saved_at: string;
}

export interface IncludedBy {
  id: string;
  included_by: Dependent[];
  /** More pins exist than the answer holds (it holds 1000). */
  truncated: boolean;
}

/** What an update of a prompt's includes did (`POST /api/v2/prompts/:id/update-includes`). */
export interface IncludesUpdate {
  id: string;
  /** The version the update started from. */
  from_version: string;
  /** The version with the new pins (from_version itself when nothing moved). */
  version: string;
  created: boolean;
  /** Each pin moved. */
  updated: { include: string; from: string; to: string }[];
  /**
   * saved (publishing not asked, or nothing to publish), published (the label moved), release_requested (the
   * label is protected: a release request waits for approval), blocked (the label's required evaluation has
   * not passed for the new version: `reason` says how to run it).
   */
  outcome: "saved" | "published" | "release_requested" | "blocked";
  label: string | null;
  release?: ReleaseView;
  reason?: string;
}

/** A section as read: its content with includes expanded, and `source`, as written, when that differs. */
export type SectionView = SectionWithId & { source?: string };

/** The full read of a prompt (docs/api-contract.md, section 2 "Prompt (full read, v2)"). */
export interface PromptView {
  id: string;
  name: string;
  description: string;
  prompt: string;
  sections: SectionView[];
  tools?: Tool[];
  /** The version's model settings, canonical JSON key order; omitted when it has none (additive). */
  model?: ModelSettings;
  /** The version's includes with their pins; omitted when it has none (additive). */
  includes?: IncludeView[];
  variables: string[];
  version: string;
  label: Label;
  production_version: string | null;
  created_at: string;
  updated_at: string;
  /** Every label of the prompt to its hash, production included when set (additive). */
  labels: Record<string, string>;
  /** The label asked for, when it was not set and its fallback (`label`) served instead. */
  fallback_for?: string;
  /** When the label read has a rollout: the candidate, its share and this read's arm. */
  rollout?: RolloutView;
}

export interface PromptListItem {
  id: string;
  name: string;
  description: string;
  production_version: string | null;
  latest_version: string;
  created_at: string;
  updated_at: string;
  /** Every label of the prompt to its hash, production included when set (additive). */
  labels: Record<string, string>;
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
  /** The label moved (production unless another was asked for). */
  label: string;
  /** The label's rollout after this publish: absent when none runs. */
  rollout?: { candidate: string; percent: number };
}

/** The answer to removing a label from a prompt. */
export interface RemovedLabel {
  id: string;
  label: string;
  removed: true;
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
    /** The labels on this version (production included), to its hash (additive). */
    labels: Record<string, string>;
  }[];
  /** Every label of the prompt to its hash, production included when set (additive). */
  labels: Record<string, string>;
}

/** What `POST /api/v2/import` did to one prompt; importing the same versions again creates nothing. */
export interface ImportedPrompt {
  id: string;
  /** The prompt did not exist and was created. */
  created: boolean;
  /** Versions added by this request. */
  versions_created: number;
  /** Versions sent that the prompt already had. */
  versions_existing: number;
  latest_version: string;
  production_version: string | null;
  /** Production moved. */
  published: boolean;
}

export type ReleaseStatus = "pending" | "approved" | "rejected" | "stale" | "cancelled";

/** A release request (docs/releases.md), as the API and the dashboard answer it. */
export interface ReleaseView {
  id: string;
  prompt_id: string;
  status: ReleaseStatus;
  label: string;
  version: string;
  /** What the label pointed to when the request was made: approval moves it only from there. */
  from_version: string | null;
  /** A rollout's share, or null to move the label whole. */
  percent: number | null;
  message: string;
  requested_by: string;
  requested_at: string;
  decided_by: string | null;
  decided_at: string | null;
  comment: string | null;
  /** The rollout plan the approval starts (steps and guardrails); absent for a plain move or rollout. */
  plan?: PlanSpec;
}

/** A label's settings as the project lists them; a name in use without settings has the defaults. */
export interface LabelSettingView {
  name: string;
  description: string;
  protected: boolean;
  fallback: string | null;
  updated_at: string;
  /** How many prompts carry it (production: how many are published). */
  in_use: number;
  /** What a version must pass before this label points to it (docs/evaluations.md), or null. */
  required_evaluation: RequirementBody | null;
  /** A rollback to a version this label served before passes its required evaluation. */
  rollback_allowed: boolean;
}
