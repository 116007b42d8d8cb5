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
  | "release.rejected";

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
  /**
   * On a live event of a stream opened with `include=read` (as this client does): the production read
   * (guard on) the change leads to, when the prompt still serves it.
   */
  read?: PromptView;
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
