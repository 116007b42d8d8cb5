import { can } from "@promptstore/core/accounts/permissions";
import { extractVariables } from "@promptstore/core/prompts/variables";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useMemo, useState } from "react";
import { Link } from "react-router";
import { connectionsQuery } from "../api/connection-queries";
import type { FieldError } from "../api/errors";
import { unplacedErrors } from "../api/errors";
import { promptBase } from "../api/example-queries";
import { promptViewQuery, versionsQuery } from "../api/queries";
import { useProject } from "../shell/session";
import { FormAlert } from "../ui/Field";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { ExampleDialog } from "./ExampleDialog";
import { ExamplesCard } from "./ExamplesCard";
import { MessagesEditor } from "./MessagesEditor";
import { ModelOverrides } from "./ModelOverrides";
import { NO_OVERRIDES, type OverridesForm, toOverrides } from "./overrides";
import { RunPanel } from "./RunPanel";
import type { ChatMessage, DraftContent, ModelSettings, RunBody, Target } from "./run-types";
import { targetFrom, targetOptions, targetTitle, targetValue } from "./targets";
import { useRun } from "./use-run";
import { VariablesForm } from "./VariablesForm";
import "./playground.css";

const NONE = "";

/**
 * The playground of one prompt: the editor's draft or any version run through a model connection of the
 * project, on variables and a chat typed here, alone or next to a second version on the same inputs.
 * Runs go through the server, which holds the provider key; the answer streams back as it is written.
 */
export default function Playground({
  projectId,
  promptId,
  draft,
  draftProblem,
}: {
  projectId: string;
  promptId: string;
  /** The editor's content as it is now, unsaved; null outside the editor. */
  draft: DraftContent | null;
  /** Why the draft cannot run as it is (its tools JSON is invalid), or null. */
  draftProblem: string | null;
}) {
  const headingId = useId();
  const context = useProject();
  const canRun = context !== null && can(context.role, "write");
  const versions = useQuery(versionsQuery(projectId, promptId));
  const connections = useQuery(connectionsQuery(projectId));

  let body: React.ReactNode;
  if (versions.isPending || connections.isPending) body = <Loading label="Loading the playground…" />;
  else if (versions.isError) body = <ErrorState error={versions.error} onRetry={() => versions.refetch()} />;
  else if (connections.isError) body = <ErrorState error={connections.error} onRetry={() => connections.refetch()} />;
  else if (!canRun) {
    body = (
      <EmptyState title="Runs are for editors and owners" level={3}>
        <p>Your role can read this prompt; ask an editor or an owner to try it on a model.</p>
      </EmptyState>
    );
  } else if (connections.data.connections.length === 0) {
    body = (
      <EmptyState title="No model connection yet" level={3}>
        <p>
          Runs go through a model connection of this project (an OpenAI-compatible API and its key, kept on the server).{" "}
          {context && can(context.role, "admin") ? (
            <Link to={`/p/${projectId}/settings`}>Add one in Settings</Link>
          ) : (
            "An owner adds them in Settings."
          )}
        </p>
      </EmptyState>
    );
  } else {
    body = (
      <Bench
        projectId={projectId}
        promptId={promptId}
        draft={draft}
        draftProblem={draftProblem}
        list={versions.data}
        connections={connections.data.connections}
      />
    );
  }

  return (
    <section className="card playground" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>Playground</h2>
          <p>
            Try {draft ? "this draft or any version" : "any version"} on a model before it ships. Runs go through this
            server; nothing here changes a version.
          </p>
        </div>
      </div>
      <div className="card-body">{body}</div>
    </section>
  );
}

interface Side {
  target: Target;
  /** The body last sent, to continue the chat from. */
  sent: RunBody | null;
  /** The turns added after the inputs (assistant tool calls and the answers). */
  earlier: ChatMessage[];
}

/** How long the draft must stay unchanged before its variables are read again. */
const VARIABLES_AFTER_MS = 250;

/** `value` once it has stayed the same for `ms`; the first value at once. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    if (Object.is(value, settled)) return;
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, settled, ms]);
  return settled;
}

function Bench({
  projectId,
  promptId,
  draft,
  draftProblem,
  list,
  connections,
}: {
  projectId: string;
  promptId: string;
  draft: DraftContent | null;
  draftProblem: string | null;
  list: import("@promptstore/core/views").VersionList;
  connections: import("../api/connection-queries").ModelConnection[];
}) {
  const options = targetOptions(list, draft !== null);
  const [connectionId, setConnectionId] = useState(connections[0]?.id ?? "");
  const [a, setA] = useState<Side>(() => ({
    target: draft ? { kind: "draft" } : { kind: "ref", ref: list.production_version ? "production" : "latest" },
    sent: null,
    earlier: [],
  }));
  const [b, setB] = useState<Side | null>(() =>
    draft && list.production_version ? { target: { kind: "ref", ref: "production" }, sent: null, earlier: [] } : null,
  );
  const [variables, setVariables] = useState<Record<string, string>>({});
  const [messages, setMessages] = useState<ChatMessage[]>([{ role: "user", content: "" }]);
  const [guard, setGuard] = useState(true);
  const [overrides, setOverrides] = useState<OverridesForm>(NO_OVERRIDES);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [saving, setSaving] = useState(false);
  const runA = useRun();
  const runB = useRun();
  const ids = { connection: useId(), a: useId(), b: useId() };

  // The variables and settings of what runs: the draft's from the editor, a version's from its read.
  const viewA = useQuery({
    ...promptViewQuery(projectId, promptId, a.target.kind === "ref" ? a.target.ref : "latest", false),
    enabled: a.target.kind === "ref",
  });
  const viewB = useQuery({
    ...promptViewQuery(projectId, promptId, b?.target.kind === "ref" ? b.target.ref : "latest", false),
    enabled: b?.target.kind === "ref",
  });
  // The draft's variables scan its whole text (a quarter of a megabyte for a big prompt): once typing pauses,
  // not at every keystroke. A run sends the draft as it is at that moment.
  const settled = useSettled(draft, VARIABLES_AFTER_MS);
  const draftVariables = useMemo(() => (settled ? extractVariables(settled.sections) : []), [settled]);
  const variablesOf = (target: Target | undefined, view: typeof viewA): string[] => {
    if (!target) return [];
    if (target.kind === "draft") return draftVariables;
    return view.data?.variables ?? [];
  };
  const names = [...new Set([...variablesOf(a.target, viewA), ...variablesOf(b?.target, viewB)])];
  const settingsA: ModelSettings | null =
    a.target.kind === "draft"
      ? (draft?.model ?? null)
      : ((viewA.data as { model?: ModelSettings } | undefined)?.model ?? null);
  const connection = connections.find((c) => c.id === connectionId) ?? connections[0];
  const running = runA.state.status === "running" || runB.state.status === "running";
  const usesDraft = a.target.kind === "draft" || b?.target.kind === "draft";
  const blocked = usesDraft && draftProblem !== null;

  const bodyFor = (target: Target, extra: ChatMessage[], model: ModelSettings): RunBody => ({
    connection: connection?.id ?? "",
    ...(target.kind === "draft" && draft ? { draft } : { version: target.kind === "ref" ? target.ref : "latest" }),
    variables: Object.fromEntries(Object.entries(variables).filter(([name]) => names.includes(name))),
    messages: [...messages.filter((m) => m.content !== ""), ...extra],
    guard,
    ...(Object.keys(model).length > 0 ? { model } : {}),
  });
  const path = `${promptBase(projectId, promptId)}/run`;

  const run = () => {
    if (running || blocked) return;
    const checked = toOverrides(overrides);
    if (!checked.ok) {
      setErrors(checked.errors);
      return;
    }
    setErrors([]);
    const bodyA = bodyFor(a.target, [], checked.model);
    setA((s) => ({ ...s, sent: bodyA, earlier: [] }));
    void runA.start(path, bodyA);
    if (b) {
      const bodyB = bodyFor(b.target, [], checked.model);
      setB((s) => (s ? { ...s, sent: bodyB, earlier: [] } : s));
      void runB.start(path, bodyB);
    } else runB.reset();
  };

  /** Continues one side's chat: its tool calls, then one `tool` message per call with the answer typed. */
  const answerTools = (side: "a" | "b", answers: Record<string, string>) => {
    const [state, current, setSide, hook] =
      side === "a" ? [runA.state, a, setA, runA] : [runB.state, b, setB as typeof setA, runB];
    if (!current?.sent || !state.message) return;
    const turns: ChatMessage[] = [
      state.message,
      ...state.toolCalls.map((call) => ({
        role: "tool" as const,
        tool_call_id: call.id,
        content: answers[call.id] ?? "",
      })),
    ];
    const body = { ...current.sent, messages: [...current.sent.messages, ...turns] };
    setSide({ ...current, sent: body, earlier: [...current.earlier, ...turns] });
    void hook.start(path, body);
  };

  const select = (value: string, id: string, label: string, onChange: (v: string) => void, allowNone: boolean) => (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <select id={id} className="select" value={value} onChange={(e) => onChange(e.target.value)}>
        {allowNone ? <option value={NONE}>Nothing: run one side</option> : null}
        {options.pointers.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
        <optgroup label="All versions">
          {options.versions.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </optgroup>
      </select>
    </div>
  );

  return (
    <div className="stack">
      <form
        className="playground-form"
        aria-label="Playground inputs"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          run();
        }}
        onKeyDown={(e) => {
          // Ctrl+Enter / Cmd+Enter runs from any input, as in the chat boxes people know.
          if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
            e.preventDefault();
            run();
          }
        }}
      >
        <div className="playground-targets">
          <div className="field">
            <label className="field-label" htmlFor={ids.connection}>
              Connection
            </label>
            <select
              id={ids.connection}
              className="select"
              value={connection?.id ?? ""}
              onChange={(e) => setConnectionId(e.target.value)}
            >
              {connections.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </div>
          {select(
            targetValue(a.target),
            ids.a,
            "Run",
            (v) => setA({ target: targetFrom(v), sent: null, earlier: [] }),
            false,
          )}
          {select(
            b ? targetValue(b.target) : NONE,
            ids.b,
            "Compare with",
            (v) => setB(v === NONE ? null : { target: targetFrom(v), sent: null, earlier: [] }),
            true,
          )}
        </div>
        <div className="playground-inputs">
          <VariablesForm names={names} values={variables} onChange={setVariables} />
          <MessagesEditor messages={messages} onChange={setMessages} />
        </div>
        <label className="checkbox">
          <input type="checkbox" checked={guard} onChange={(e) => setGuard(e.target.checked)} />
          Append the guard to the system prompt
        </label>
        <ModelOverrides
          version={settingsA}
          models={connection?.models ?? []}
          form={overrides}
          errors={errors}
          onChange={setOverrides}
        />
        <FormAlert messages={unplacedErrors(errors, (f) => f.startsWith("model."))} />
        {blocked ? (
          <p className="form-alert" role="alert">
            The draft cannot run until its tools are valid JSON: {draftProblem}
          </p>
        ) : null}
        <div className="playground-actions">
          <button type="submit" className="button button-primary" disabled={running || blocked}>
            {b ? "Run both" : "Run"}
          </button>
          {running ? (
            <button
              type="button"
              className="button"
              onClick={() => {
                runA.stop();
                runB.stop();
              }}
            >
              Stop
            </button>
          ) : null}
          <button
            type="button"
            className="button"
            onClick={() => setSaving(true)}
            disabled={messages.every((m) => m.content === "") && Object.values(variables).every((v) => v === "")}
          >
            Save as example…
          </button>
          <span className="subtle small playground-shortcut">Ctrl+Enter runs</span>
        </div>
      </form>

      <div className={b ? "run-grid run-grid-two" : "run-grid"}>
        <RunPanel
          title={targetTitle(a.target)}
          state={runA.state}
          earlier={a.earlier}
          onStop={runA.stop}
          onAnswerTools={(answers) => answerTools("a", answers)}
        />
        {b ? (
          <RunPanel
            title={targetTitle(b.target)}
            state={runB.state}
            earlier={b.earlier}
            onStop={runB.stop}
            onAnswerTools={(answers) => answerTools("b", answers)}
          />
        ) : null}
      </div>

      <ExamplesCard
        projectId={projectId}
        promptId={promptId}
        list={list}
        connectionId={connection?.id ?? ""}
        overrides={overrides}
        guard={guard}
        draft={draft}
        draftProblem={draftProblem}
        onLoad={(example) => {
          setVariables(example.variables);
          setMessages(example.messages.length > 0 ? example.messages : [{ role: "user", content: "" }]);
        }}
      />

      {saving ? (
        <ExampleDialog
          projectId={projectId}
          promptId={promptId}
          example={null}
          inputs={{
            variables: Object.fromEntries(Object.entries(variables).filter(([n]) => names.includes(n))),
            messages: messages.filter((m) => m.content !== ""),
          }}
          onClose={() => setSaving(false)}
        />
      ) : null}
    </div>
  );
}
