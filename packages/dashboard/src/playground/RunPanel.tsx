import { useId, useState } from "react";
import { formatCount, shortHash } from "../ui/format";
import { formatMs, settingsSummary } from "./overrides";
import { ERROR_TITLES, type RunState } from "./run-state";
import type { ChatMessage } from "./run-types";

/**
 * One side of the playground: what ran, the answer as it streams, its tool calls (answerable), the
 * timings and usage, and an error in words next to the run.
 */
const ANNOUNCE: Record<RunState["status"], string> = {
  idle: "",
  running: "Running…",
  done: "The answer is complete.",
  error: "The run failed.",
  stopped: "",
};

export function RunPanel({
  title,
  state,
  earlier,
  onStop,
  onAnswerTools,
}: {
  title: string;
  state: RunState;
  /** The turns this side added after the inputs (tool calls and their answers), oldest first. */
  earlier: readonly ChatMessage[];
  onStop: () => void;
  onAnswerTools: (answers: Record<string, string>) => void;
}) {
  const headingId = useId();
  const running = state.status === "running";
  const waiting = running && state.text === "" && state.toolCalls.length === 0;
  return (
    <section className="run-panel" aria-labelledby={headingId} aria-busy={running || undefined}>
      <header className="run-panel-head">
        <h3 id={headingId}>{title}</h3>
        {state.version ? (
          <span className="hash" title={state.version}>
            {state.draft ? "draft " : ""}
            {shortHash(state.version)}
          </span>
        ) : null}
        <span className="spacer" />
        {running ? (
          <button type="button" className="button button-small" onClick={onStop}>
            Stop
          </button>
        ) : null}
      </header>
      {state.model ? <p className="subtle small run-settings">{settingsSummary(state.model)}</p> : null}
      {earlier.length > 0 ? <Transcript messages={earlier} /> : null}
      {/* Announced once per state, not per token: a screen reader reading every piece would never finish. */}
      <p className="visually-hidden" role="status">
        {ANNOUNCE[state.status]}
      </p>
      <div className={state.status === "error" && state.text === "" ? undefined : "run-answer"}>
        {state.status === "idle" ? <p className="subtle">Not run yet.</p> : null}
        {waiting ? (
          <p className="loading">
            <span className="spinner" aria-hidden="true" />
            Waiting for the first token…
          </p>
        ) : null}
        {state.text !== "" ? <div className="run-text">{state.text}</div> : null}
        {state.status === "done" && state.text === "" && state.toolCalls.length === 0 ? (
          <p className="subtle">The model answered nothing.</p>
        ) : null}
      </div>
      {state.toolCalls.length > 0 ? <ToolCalls state={state} onAnswer={onAnswerTools} /> : null}
      {state.status === "stopped" ? (
        <p className="notice" role="status">
          Stopped. The provider's request was cancelled.
        </p>
      ) : null}
      {state.status === "error" && state.error ? (
        <div className="form-alert run-error" role="alert">
          <p>
            <strong>{ERROR_TITLES[state.error.code] ?? "The run failed"}</strong>
            {state.error.status !== null ? ` (${state.error.status})` : ""}
          </p>
          <p>{state.error.message}</p>
        </div>
      ) : null}
      <RunFacts state={state} />
    </section>
  );
}

function RunFacts({ state }: { state: RunState }) {
  if (state.status !== "done") return null;
  return (
    <dl className="run-facts">
      <div>
        <dt>First token</dt>
        <dd>{formatMs(state.ttftMs)}</dd>
      </div>
      <div>
        <dt>Total</dt>
        <dd>{formatMs(state.totalMs)}</dd>
      </div>
      <div>
        <dt>Tokens</dt>
        <dd>
          {state.usage
            ? `${formatCount(state.usage.prompt_tokens)} in · ${formatCount(state.usage.completion_tokens)} out`
            : "not reported"}
        </dd>
      </div>
      {state.finishReason && state.finishReason !== "stop" ? (
        <div>
          <dt>Finished</dt>
          <dd>{state.finishReason === "length" ? "at the token limit" : state.finishReason}</dd>
        </div>
      ) : null}
    </dl>
  );
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function ToolCalls({ state, onAnswer }: { state: RunState; onAnswer: (answers: Record<string, string>) => void }) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const answerable = state.status === "done" && state.toolCalls.every((c) => c.id !== "");
  return (
    <form
      className="tool-calls"
      aria-label="Tool calls"
      onSubmit={(e) => {
        e.preventDefault();
        onAnswer(answers);
      }}
    >
      {state.toolCalls.map((call, index) => (
        <div key={call.id || index} className="tool-call">
          <p className="tool-call-head">
            Calls <span className="mono">{call.function.name || "…"}</span>
          </p>
          <pre className="tool-call-args mono">{prettyJson(call.function.arguments)}</pre>
          {answerable ? (
            <label className="field">
              <span className="field-label">Answer to {call.function.name}</span>
              <textarea
                className="textarea mono"
                rows={2}
                value={answers[call.id] ?? ""}
                placeholder='{ "result": … }'
                onChange={(e) => setAnswers((a) => ({ ...a, [call.id]: e.target.value }))}
              />
            </label>
          ) : null}
        </div>
      ))}
      {answerable ? (
        <button type="submit" className="button button-small">
          Send the answers and continue
        </button>
      ) : null}
    </form>
  );
}

function Transcript({ messages }: { messages: readonly ChatMessage[] }) {
  return (
    <ol className="run-transcript" aria-label="Earlier turns">
      {messages.map((m, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a transcript only grows
        <li key={i} className="run-turn">
          <span className="badge badge-outline">{m.role}</span>{" "}
          {m.role === "assistant" && m.tool_calls?.length
            ? `called ${m.tool_calls.map((c) => c.function.name).join(", ")}`
            : m.content}
        </li>
      ))}
    </ol>
  );
}
