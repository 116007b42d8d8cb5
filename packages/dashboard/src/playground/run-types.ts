/**
 * The shapes of docs/playground.md that the playground sends and reads: core's, where core has them (types
 * only: core's run settings module hashes with node:crypto, which a browser has not).
 */
import type { AssistantMessage, ChatMessage, ExampleView, ResultView } from "@promptstore/core/playground";
import type { ModelOverride } from "@promptstore/core/run-settings";

export type { ChatMessage, Usage } from "@promptstore/core/playground";

export type ToolCall = NonNullable<AssistantMessage["tool_calls"]>[number];

export type ResponseFormat = NonNullable<ModelOverride["response_format"]>;

/** A version's model settings, or a run's overrides of them (every key optional). */
export type ModelSettings = ModelOverride;

export interface RunError {
  code: string;
  message: string;
  status: number | null;
}

/** What runs: the editor's draft, or a version reference as reads take it. */
export type Target = { kind: "draft" } | { kind: "ref"; ref: string };

export interface DraftContent {
  sections: { title: string; content: string; enabled: boolean }[];
  tools?: unknown[];
  model?: ModelSettings;
}

export interface RunBody {
  connection: string;
  version?: string;
  draft?: DraftContent;
  variables: Record<string, string>;
  messages: ChatMessage[];
  guard: boolean;
  model?: ModelSettings;
}

/** A kept result of an example on a version (docs/playground.md, "Result"). */
export type ExampleResult = ResultView;

export type Example = ExampleView;
