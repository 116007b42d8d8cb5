/**
 * The shapes of the API, named. Every request and response type is taken from src/generated/api-types.ts,
 * which is generated from the server's own OpenAPI document; only what that document does not describe
 * (the frozen v1 read and the change events) is written here, and tests hold those to the server's too.
 */
import type { paths } from "./generated/api-types.js";

type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;
type Data<R> = Json<R> extends { data: infer D } ? D : never;

type PromptPath = paths["/api/v2/prompts/{id}"];
type PromptsPath = paths["/api/v2/prompts"];

/** A prompt as a v2 read returns it: the assembled text, its sections, tools, variables and version served. */
export type PromptView = Data<PromptPath["get"]["responses"][200]>;
/** One section of a read. */
export type Section = PromptView["sections"][number];
/** A function-calling tool, in the chat-completions format. */
export type Tool = NonNullable<PromptView["tools"]>[number];
/**
 * A version's model settings (`name`, `temperature`, `top_p`, `max_output_tokens`, `stop`, `response_format`,
 * `extra`): content, hashed with the sections and tools. Absent from a read when the version has none.
 */
export type ModelSettings = NonNullable<PromptView["model"]>;
/** `GET /api/v2/prompts`: the project and its prompts. */
export type PromptList = Data<PromptsPath["get"]["responses"][200]>;
/** One prompt of the list, with both pointers. */
export type PromptListItem = PromptList["prompts"][number];
/** Query of `GET /api/v2/prompts`. */
export type ListQuery = NonNullable<PromptsPath["get"]["parameters"]["query"]>;
/** Body of `POST /api/v2/prompts`: `sections` or `markdown`. */
export type CreatePromptInput = Json<NonNullable<PromptsPath["post"]["requestBody"]>>;
/** `POST /api/v2/prompts` answer. */
export type CreatedPrompt = Data<PromptsPath["post"]["responses"][201]>;
/** Body of `PUT /api/v2/prompts/{id}`: the full content of the new version. */
export type SaveVersionInput = Json<NonNullable<PromptPath["put"]["requestBody"]>>;
/** `PUT /api/v2/prompts/{id}` answer. */
export type SavedVersion = Data<PromptPath["put"]["responses"][200]>;
/** `POST /api/v2/prompts/{id}/publish` answer. */
export type PublishedVersion = Data<paths["/api/v2/prompts/{id}/publish"]["post"]["responses"][200]>;
export type RemovedLabel = Data<paths["/api/v2/prompts/{id}/labels/{label}"]["delete"]["responses"][200]>;
/** `DELETE /api/v2/prompts/{id}` answer: the prompt and all its versions are gone; the id is free again. */
export type DeletedPrompt = Data<PromptPath["delete"]["responses"][200]>;
/** `GET /api/v2/prompts/{id}/versions`: the history, newest first, with both pointers. */
export type VersionList = Data<paths["/api/v2/prompts/{id}/versions"]["get"]["responses"][200]>;
/** One version of the history. */
export type VersionInfo = VersionList["versions"][number];
/** Body of `POST /api/v2/import`: one prompt and versions made elsewhere. */
export type ImportPromptInput = Json<NonNullable<paths["/api/v2/import"]["post"]["requestBody"]>>;
/** `POST /api/v2/import` answer. */
export type ImportedPrompt = Data<paths["/api/v2/import"]["post"]["responses"][200]>;
/** The failure envelope every error answer carries. */
export type FailureEnvelope = Json<paths["/api/v2/prompts"]["get"]["responses"][401]>;

type DatasetsPath = paths["/api/v2/datasets"];
type DatasetPath = paths["/api/v2/datasets/{id}"];
type Query<R> = R extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** `GET /api/v2/datasets`: the project's datasets. */
export type DatasetList = Data<DatasetsPath["get"]["responses"][200]>;
/** A dataset in the list: its head version and how many cases that holds. */
export type DatasetListItem = DatasetList["datasets"][number];
/** Body of `POST /api/v2/datasets`: `cases`, or `from_examples` (a prompt whose saved examples become cases). */
export type CreateDatasetInput = Json<NonNullable<DatasetsPath["post"]["requestBody"]>>;
/** A test case as it is sent: `vars`, and optionally `messages`, `expected`, `tags`. */
export type DatasetCaseInput = NonNullable<CreateDatasetInput["cases"]>[number];
/** `POST /api/v2/datasets` (and an import's) answer. */
export type CreatedDataset = Data<DatasetsPath["post"]["responses"][201]>;
/** `GET /api/v2/datasets/{id}`: the dataset at a version (its head unless one is asked for). */
export type Dataset = Data<DatasetPath["get"]["responses"][200]>;
/** Body of `PUT /api/v2/datasets/{id}`: the new version's cases exactly. */
export type ReplaceCasesInput = Json<NonNullable<DatasetPath["put"]["requestBody"]>>;
/** Body of `POST /api/v2/datasets/{id}/cases`: cases appended to the head's. */
export type AppendCasesInput = Json<NonNullable<paths["/api/v2/datasets/{id}/cases"]["post"]["requestBody"]>>;
/** What a save answers: the head now, and whether that version is new. */
export type SavedDataset = Data<DatasetPath["put"]["responses"][200]>;
/** Body of `PATCH /api/v2/datasets/{id}`: name and description, not content. */
export type UpdateDatasetInput = Json<NonNullable<DatasetPath["patch"]["requestBody"]>>;
/** `DELETE /api/v2/datasets/{id}` answer. */
export type DeletedDataset = Data<DatasetPath["delete"]["responses"][200]>;
/** `GET /api/v2/datasets/{id}/versions`: newest first. */
export type DatasetVersions = Data<paths["/api/v2/datasets/{id}/versions"]["get"]["responses"][200]>;
/** `GET /api/v2/datasets/{id}/cases`: a page of a version's cases; `next_after` continues. */
export type DatasetCasesPage = Data<paths["/api/v2/datasets/{id}/cases"]["get"]["responses"][200]>;
/** Query of `GET /api/v2/datasets/{id}/cases`. */
export type DatasetCasesQuery = Query<paths["/api/v2/datasets/{id}/cases"]["get"]>;
/** One case of a page, with its position and id (the hash of its content). */
export type DatasetCaseEntry = DatasetCasesPage["cases"][number];
/** A case as stored and exported: `vars` always, the optional fields only when given. */
export type DatasetCase = DatasetCaseEntry["case"];

type EvaluationsPath = paths["/api/v2/prompts/{id}/evaluations"];
type EvaluationPath = paths["/api/v2/evaluations/{evaluationId}"];

/** Body of `POST /api/v2/prompts/{id}/evaluations` (docs/evaluations.md). */
export type StartEvaluationInput = Json<NonNullable<EvaluationsPath["post"]["requestBody"]>>;
/** A check of a check set: `{ type, name?, ...params }`. */
export type Check = StartEvaluationInput["checks"][number];
/**
 * An evaluation: status, progress, per version the counts, pass rate, scores, tokens and latency, and the
 * compare counts against the first version.
 */
export type Evaluation = Data<EvaluationsPath["post"]["responses"][202]>;
/** One version's numbers in an evaluation. */
export type EvaluationVersion = Evaluation["versions"][number];
/** `GET /api/v2/evaluations/{id}`: the evaluation and a page of its cases. */
export type EvaluationWithCases = Data<EvaluationPath["get"]["responses"][200]>;
/** `GET /api/v2/evaluations/{id}/cases`: a page of cases; `next` is the `after` of the next page. */
export type EvaluationCasesPage = Data<paths["/api/v2/evaluations/{evaluationId}/cases"]["get"]["responses"][200]>;
/** One case of an evaluation with each version's answer, verdicts and any error. */
export type EvaluationCase = EvaluationCasesPage["items"][number];
/** `only`, `after` and `limit` of an evaluation's cases. */
export type EvaluationCasesQuery = Query<paths["/api/v2/evaluations/{evaluationId}/cases"]["get"]>;
/** `GET /api/v2/prompts/{id}/evaluations`: newest first. */
export type EvaluationList = Data<EvaluationsPath["get"]["responses"][200]>;
/** What a `progress` event of an evaluation's stream says. */
export interface EvaluationProgress {
  status: Evaluation["status"];
  progress: { done: number; total: number };
}

/**
 * `GET /api/v1/prompts/{id}`, the frozen v1 read: production with the guard. Its original fields never
 * change; `tools` is always present (empty when none). It is not in the (v2) OpenAPI document.
 */
export type PromptViewV1 = Omit<PromptView, "tools"> & { tools: Tool[] };

/** A reference to a version: `production`, `latest`, a full 64-character hash or a unique prefix of 7+ characters. */
export type VersionRef = "production" | "latest" | (string & {});

/** A prompt as `get()` serves it: a read of the service, or the caller's fallback when it could not be reached. */
export type Prompt = Omit<PromptView, "label"> & {
  label: PromptView["label"] | "fallback";
  /** True when this is the caller's fallback, not a read of the service. */
  fallback?: true;
};

/** A fallback for `get()`: the prompt text, or the fields to serve (at least `prompt`). */
export type Fallback = string | (Partial<Omit<Prompt, "prompt">> & { prompt: string });

/** The change-event types of `GET /api/v2/events` (docs/events.md). */
export type PromptEventType =
  | "prompt.created"
  | "prompt.version_saved"
  | "prompt.published"
  | "prompt.deleted"
  | "prompt.label_moved"
  | "prompt.label_removed"
  | "prompt.rollout_changed"
  | "release.requested"
  | "release.approved"
  | "release.rejected"
  | "evaluation.completed"
  | "include.outdated"
  | "rollout.advanced"
  | "rollout.aborted"
  | "rollout.completed";

/** A change event: every event carries both pointers after the change (both null after a deletion). */
export interface PromptEvent {
  /** Increasing within a project, in commit order; the SSE `id`. */
  id: number;
  type: PromptEventType;
  prompt_id: string;
  /** The version the change is about: created, saved, now in production, or (deleted) what production served, else latest. */
  version: string;
  production_version: string | null;
  /** The newest version after the change; null once deleted. */
  latest_version: string | null;
  /** ISO 8601, UTC, when the change was committed. */
  at: string;
  /** The label moved, removed or rolled out (the release path, docs/releases.md). */
  label?: string;
  /** What the label pointed to before the change; null when it was not set. */
  previous_version?: string | null;
  /** The label's rollout after the change; null when none. */
  rollout?: { candidate: string; percent: number } | null;
  /** The release request of a release.* event. */
  release?: {
    id: string;
    status: "pending" | "approved" | "rejected" | "stale" | "cancelled";
    label: string;
    version: string;
    from_version: string | null;
    percent: number | null;
    requested_by: string;
    decided_by: string | null;
    comment: string | null;
  };
  /** The evaluation that ended (evaluation.completed; docs/evaluations.md). */
  evaluation?: {
    id: string;
    status: "done" | "failed" | "stopped";
    reused: boolean;
    dataset: { id: string; version: string };
    checks_hash: string;
    versions: {
      version: string;
      draft: boolean;
      passed: number;
      failed: number;
      errored: number;
      pass_rate: number | null;
    }[];
  };
  /**
   * The stale include of an include.outdated event (docs/includes.md): `prompt_id` and `version` are the
   * including prompt's version whose pin of `include.prompt` is behind its pointer.
   */
  include?: {
    prompt: string;
    pointer: string;
    references: string[];
    pinned: string;
    current: string;
    labels: string[];
  };
  /**
   * A rollout plan's decision (rollout.advanced, rollout.aborted, rollout.completed; docs/rollouts.md): the
   * plan after it and the numbers that decided it. A watching client does not apply these events: the label's
   * own move reaches it as prompt.rollout_changed or prompt.published.
   */
  plan?: {
    id: string;
    status: "running" | "paused" | "aborted" | "completed";
    step: number;
    percent: number;
    end_reason: string | null;
    decision: {
      verdict: "wait" | "advance" | "complete" | "abort";
      at: string;
      step: number;
      results: {
        guardrail: "ok_rate" | "score" | "latency_p95";
        threshold: number;
        estimate: number | null;
        interval: [number, number | null] | null;
        decision: "breached" | "holds" | "undecided";
        alpha: number;
        candidate: { count: number; value: number | null };
        current: { count: number; value: number | null };
      }[];
      minimums: {
        elapsed_seconds: number;
        min_duration_seconds: number;
        candidate_outcomes: number;
        min_outcomes: number;
        met: boolean;
      } | null;
      by: string;
    };
  };
  /**
   * On a live event of a stream opened with `include=read` (as this client does): the production read
   * (guard on) the change leads to, when the prompt still serves it.
   */
  read?: PromptView;
}

/**
 * A change event about the project, not one prompt: `label.requirement_changed`, a label's required evaluation
 * (by hash; null: none) or its rollback rule changed (docs/evaluations.md). It has no `prompt_id` and no
 * pointers, and changes nothing a client holds: a watching client ignores it and does not tell `onEvent`.
 * Readers of the stream or of webhooks of their own tell it apart by `type`.
 */
export interface ProjectEvent {
  /** Increasing within a project, in commit order; the SSE `id`. */
  id: number;
  type: "label.requirement_changed";
  /** ISO 8601, UTC, when the change was committed. */
  at: string;
  /** The label whose requirement changed. */
  label: string;
  /** The label's requirement after the change: its hash (null: none) and whether rollbacks pass without one. */
  requirement: { hash: string | null; rollback_allowed: boolean };
  /** The label's requirement before the change. */
  previous: { hash: string | null; rollback_allowed: boolean };
}

/** The `ready` event that opens every stream: where the stream now stands. */
export interface ReadyEvent {
  last_event_id: number;
}

/** Sent instead of a replay when the events after `Last-Event-ID` are no longer kept: everything is reloaded. */
export interface ResetEvent {
  last_event_id: number;
  reason: string;
}
