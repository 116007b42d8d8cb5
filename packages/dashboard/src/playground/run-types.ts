/** The shapes of docs/playground.md that the playground sends and reads. */

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; schema: unknown; strict?: boolean } };

/** A version's model settings, or a run's overrides of them (every key optional). */
export interface ModelSettings {
  name?: string;
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  stop?: string[];
  response_format?: ResponseFormat;
  extra?: Record<string, unknown>;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface Timing {
  ttft_ms: number | null;
  total_ms: number;
}

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
export interface ExampleResult {
  example_id: string;
  version: string;
  settings_hash: string;
  settings: { connection: string; guard: boolean; model: ModelSettings };
  answer: { role: "assistant"; content: string | null; tool_calls?: ToolCall[] };
  finish_reason: string | null;
  usage: Usage | null;
  timing: Timing;
  ran_at: string;
}

export interface Example {
  id: string;
  prompt_id: string;
  name: string;
  variables: Record<string, string>;
  messages: ChatMessage[];
  good_answer: string | null;
  created_at: string;
  updated_at: string;
}
