/**
 * One run as the playground shows it, built from the stream's events (docs/playground.md, "The stream").
 * Pure, so the reading of every event is unit-tested without a server.
 */

import type { ModelSettings, RunError, ToolCall, Usage } from "./run-types";
import type { StreamEvent } from "./sse";

export type RunStatus = "idle" | "running" | "done" | "error" | "stopped";

export interface RunState {
  status: RunStatus;
  /** The version's hash (a draft's: the hash its content would have), from `start`. */
  version: string | null;
  draft: boolean;
  /** The effective model settings, from `start`. */
  model: ModelSettings | null;
  text: string;
  /** Assembled piece by piece from `tool_call` events, by index. */
  toolCalls: ToolCall[];
  /** The assistant message `done` reported, to continue the chat with. */
  message: { role: "assistant"; content: string | null; tool_calls?: ToolCall[] } | null;
  finishReason: string | null;
  usage: Usage | null;
  ttftMs: number | null;
  totalMs: number | null;
  error: RunError | null;
}

export const IDLE: RunState = {
  status: "idle",
  version: null,
  draft: false,
  model: null,
  text: "",
  toolCalls: [],
  message: null,
  finishReason: null,
  usage: null,
  ttftMs: null,
  totalMs: null,
  error: null,
};

export const started = (): RunState => ({ ...IDLE, status: "running" });

function parse(data: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(data);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function withToolPiece(calls: ToolCall[], data: Record<string, unknown>): ToolCall[] {
  const index = num(data.index) ?? 0;
  const next = [...calls];
  const current = next[index] ?? { id: "", type: "function" as const, function: { name: "", arguments: "" } };
  next[index] = {
    id: str(data.id) ?? current.id,
    type: "function",
    function: {
      name: str(data.name) ?? current.function.name,
      arguments: current.function.arguments + (str(data.arguments) ?? ""),
    },
  };
  return next;
}

/** The state after one event; an event it cannot read leaves it as it was. */
export function applyEvent(state: RunState, event: StreamEvent): RunState {
  const data = parse(event.data);
  if (data === null) return state;
  switch (event.event) {
    case "start":
      return {
        ...state,
        version: str(data.version),
        draft: data.draft === true,
        model: (data.model as ModelSettings | undefined) ?? null,
      };
    case "delta":
      return { ...state, text: state.text + (str(data.content) ?? "") };
    case "tool_call":
      return { ...state, toolCalls: withToolPiece(state.toolCalls, data) };
    case "done": {
      const message = (data.message as RunState["message"]) ?? null;
      const timing = (data.timing ?? {}) as Record<string, unknown>;
      return {
        ...state,
        status: "done",
        message,
        // The assembled message is the one truth at the end; the pieces were for watching it arrive.
        text: message?.content ?? state.text,
        toolCalls: message?.tool_calls ?? state.toolCalls,
        finishReason: str(data.finish_reason),
        usage: (data.usage as Usage | null) ?? null,
        ttftMs: num(timing.ttft_ms),
        totalMs: num(timing.total_ms),
      };
    }
    case "error":
      return {
        ...state,
        status: "error",
        error: {
          code: str(data.code) ?? "provider_error",
          message: str(data.message) ?? "The run failed.",
          status: num(data.status),
        },
      };
    default:
      return state;
  }
}

/** The stream ended without `done` or `error`: the server or the network cut it. */
export function endedEarly(state: RunState): RunState {
  if (state.status !== "running") return state;
  return {
    ...state,
    status: "error",
    error: {
      code: "stream_ended",
      message: "The answer stopped before it was complete: the connection was lost.",
      status: null,
    },
  };
}

/** What a person reads first for an error code: what happened, then the provider's own words. */
export const ERROR_TITLES: Record<string, string> = {
  provider_unauthorized: "The provider refused the API key",
  model_not_found: "The provider does not know this model",
  provider_rate_limited: "The provider's rate limit was reached",
  provider_error: "The provider answered with an error",
  provider_timeout: "The provider did not answer in time",
  provider_answer_too_large: "The provider's answer was too large",
  provider_stream_broken: "The provider's answer broke off",
  provider_unreachable: "The provider could not be reached",
  stream_ended: "The answer broke off",
  request_failed: "The run was refused",
};
