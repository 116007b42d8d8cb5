import type { VersionList } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { examplesQuery, resultsQuery, useRemoveExample } from "../api/example-queries";
import { ConfirmDialog } from "../ui/Dialog";
import { formatCount, plural, shortHash } from "../ui/format";
import { ImportedMark } from "../ui/ImportedMark";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { ExampleDialog } from "./ExampleDialog";
import { formatMs, type OverridesForm, settingsSummary, toOverrides } from "./overrides";
import { ERROR_TITLES } from "./run-state";
import type { DraftContent, Example, ExampleResult, RunError } from "./run-types";
import { DRAFT, targetFrom, targetOptions, targetTitle } from "./targets";
import { cellKey, useRunAll } from "./use-run-all";

/**
 * The prompt's saved examples: list, load into the playground, edit, remove, and run all of them against
 * two versions side by side, or the editor's unsaved draft beside a version. Results kept by the server show
 * at once, labelled with when they ran; a draft's are kept under the hash it saves as.
 */
export function ExamplesCard({
  projectId,
  promptId,
  list,
  connectionId,
  overrides,
  guard,
  draft,
  draftProblem,
  onLoad,
}: {
  projectId: string;
  promptId: string;
  /** The editor's unsaved draft, offered as the first side; null when there is none. */
  draft: DraftContent | null;
  /** Why the draft cannot run as it is, or null. */
  draftProblem: string | null;
  list: VersionList;
  connectionId: string;
  overrides: OverridesForm;
  guard: boolean;
  onLoad: (example: Example) => void;
}) {
  const headingId = useId();
  const ids = { a: useId(), b: useId() };
  const examples = useQuery(examplesQuery(projectId, promptId));
  const remove = useRemoveExample(projectId, promptId);
  const runAll = useRunAll(projectId, promptId);
  const [editing, setEditing] = useState<Example | null>(null);
  const [removing, setRemoving] = useState<Example | null>(null);
  const [chosenA, setRefA] = useState("latest");
  const [refB, setRefB] = useState(list.production_version ? "production" : "");
  const [problem, setProblem] = useState<string | null>(null);
  // A draft chosen and then saved (or discarded) is gone: its side becomes the latest version.
  const refA = chosenA === DRAFT && draft === null ? "latest" : chosenA;
  const optionsA = targetOptions(list, draft !== null);
  const options = targetOptions(list, false);
  const refs = [refA, refB].filter((r) => r !== "");
  // A draft has no kept results to ask for by name: the run answers them (kept ones at once).
  const keptA = useQuery({ ...resultsQuery(projectId, promptId, refA), enabled: refA !== DRAFT });
  const keptB = useQuery({ ...resultsQuery(projectId, promptId, refB || "latest"), enabled: refB !== "" });
  const running = runAll.state.status === "running";

  const start = () => {
    const checked = toOverrides(overrides);
    if (!checked.ok) {
      setProblem("The playground's model settings have an error; fix them first.");
      return;
    }
    if (refA === DRAFT && draftProblem !== null) {
      setProblem(`The draft cannot run until its tools are valid JSON: ${draftProblem}`);
      return;
    }
    setProblem(null);
    void runAll.start({
      connection: connectionId,
      ...(refA === DRAFT && draft ? { draft, versions: refB === "" ? [] : [refB] } : { versions: refs }),
      guard,
      ...(Object.keys(checked.model).length > 0 ? { model: checked.model } : {}),
    });
  };

  const select = (
    id: string,
    label: string,
    value: string,
    onChange: (v: string) => void,
    allowNone: boolean,
    choices: typeof options,
  ) => (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <select id={id} className="select" value={value} onChange={(e) => onChange(e.target.value)}>
        {allowNone ? <option value="">Nothing: one version</option> : null}
        {choices.pointers.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
        <optgroup label="All versions">
          {choices.versions.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </optgroup>
      </select>
    </div>
  );

  // The newest result of each example for a side: this run's if it gave one, else the kept one.
  const column = (index: 0 | 1, kept: typeof keptA) => {
    const resolved = runAll.state.versions[index];
    const hash = resolved && resolved.ref === refs[index] ? resolved.version : (kept.data?.version ?? null);
    return (exampleId: string): Cell => {
      if (hash) {
        const fresh = runAll.state.results[cellKey(exampleId, hash)];
        if (fresh) return { kind: "result", result: fresh.result, kept: fresh.kept };
        const failed = runAll.state.errors[cellKey(exampleId, hash)];
        if (failed) return { kind: "error", error: failed };
      }
      // A result run here before an imported one, which is shown only when there is nothing else (marked).
      const results = kept.data?.results.filter((r) => r.example_id === exampleId) ?? [];
      const found = results.find((r) => !r.imported) ?? results[0];
      if (found) return { kind: "result", result: found, kept: true };
      return { kind: running ? "waiting" : "none" };
    };
  };
  const cellsA = column(0, keptA);
  const cellsB = column(1, keptB);

  let body: React.ReactNode;
  if (examples.isPending) body = <Loading label="Loading the examples…" />;
  else if (examples.isError) body = <ErrorState error={examples.error} onRetry={() => examples.refetch()} />;
  else if (examples.data.examples.length === 0) {
    body = (
      <EmptyState title="No examples yet" level={3}>
        <p>Run the prompt above, then “Save as example…” keeps its inputs here, to run again on every new version.</p>
      </EmptyState>
    );
  } else {
    const all = examples.data.examples;
    body = (
      <>
        <div className="examples-run">
          {select(ids.a, "Version", refA, setRefA, false, optionsA)}
          {select(ids.b, "Next to", refB, setRefB, true, options)}
          <div className="examples-run-actions">
            <button type="button" className="button button-primary" disabled={running} onClick={start}>
              Run all {plural(all.length, "example")}
            </button>
            {running ? (
              <button type="button" className="button" onClick={runAll.stop}>
                Stop
              </button>
            ) : null}
          </div>
        </div>
        <div aria-live="polite">
          {problem ? (
            <p className="form-alert" role="alert">
              {problem}
            </p>
          ) : null}
          {runAll.state.status === "error" && runAll.state.error ? (
            <p className="form-alert" role="alert">
              {runAll.state.error}
            </p>
          ) : null}
          {runAll.state.status === "done" && runAll.state.summary ? (
            <p className="notice notice-success" role="status">
              Ran {formatCount(runAll.state.summary.ran)}, shown from before {formatCount(runAll.state.summary.kept)}
              {runAll.state.summary.failed > 0 ? `, ${formatCount(runAll.state.summary.failed)} failed` : ""}.
            </p>
          ) : null}
          {runAll.state.status === "stopped" ? (
            <p className="notice" role="status">
              Stopped. What finished is kept; nothing half-done is.
            </p>
          ) : null}
        </div>
        <ol className="examples-list">
          {all.map((example) => (
            <li key={example.id} className="example">
              <article aria-labelledby={`${example.id}-name`}>
                <header className="example-head">
                  <h4 id={`${example.id}-name`}>{example.name}</h4>
                  <span className="spacer" />
                  <button type="button" className="button button-small" onClick={() => onLoad(example)}>
                    Load into the playground
                  </button>
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Edit ${example.name}`}
                    onClick={() => setEditing(example)}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Remove ${example.name}`}
                    onClick={() => {
                      remove.reset();
                      setRemoving(example);
                    }}
                  >
                    Remove
                  </button>
                </header>
                <p className="example-summary subtle small">{inputsSummary(example)}</p>
                {example.good_answer ? (
                  <p className="example-good">
                    <span className="field-label">Good answer: </span>
                    {example.good_answer}
                  </p>
                ) : null}
                <div className={refs.length === 2 ? "example-cells example-cells-two" : "example-cells"}>
                  <ResultCell label={targetTitle(targetFrom(refA))} cell={cellsA(example.id)} />
                  {refB !== "" ? <ResultCell label={targetTitle(targetFrom(refB))} cell={cellsB(example.id)} /> : null}
                </div>
              </article>
            </li>
          ))}
        </ol>
      </>
    );
  }

  return (
    <section className="examples" aria-labelledby={headingId}>
      <h3 id={headingId}>Saved examples</h3>
      {body}
      {editing ? (
        <ExampleDialog
          projectId={projectId}
          promptId={promptId}
          example={editing}
          inputs={editing}
          onClose={() => setEditing(null)}
        />
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove the example “${removing.name}”?`}
          confirmLabel="Remove"
          danger
          pending={remove.isPending}
          error={remove.isError ? errorText(remove.error) : null}
          onClose={() => setRemoving(null)}
          onConfirm={() => remove.mutate(removing.id, { onSuccess: () => setRemoving(null) })}
        >
          <p>Its kept results go with it. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

type Cell =
  | { kind: "result"; result: ExampleResult; kept: boolean }
  | { kind: "error"; error: RunError }
  | { kind: "waiting" }
  | { kind: "none" };

function inputsSummary(example: Example): string {
  const vars = Object.entries(example.variables).map(([k, v]) => `${k} = ${v}`);
  const last = [...example.messages].reverse().find((m) => m.role === "user");
  return [...vars, ...(last ? [`“${last.content}”`] : [])].join(" · ") || "no inputs";
}

function ResultCell({ label, cell }: { label: string; cell: Cell }) {
  return (
    <div className="result-cell">
      <p className="result-cell-head">
        <span className="result-ref">{label}</span>
        {cell.kind === "result" ? (
          <span className="subtle small">
            {cell.kept ? "kept, ran " : "ran "}
            <TimeAgo iso={cell.result.ran_at} /> · {shortHash(cell.result.version)}
          </span>
        ) : null}
        {cell.kind === "result" && cell.result.imported ? <ImportedMark /> : null}
      </p>
      {cell.kind === "result" ? (
        <>
          <div className="run-text">
            {cell.result.answer.content ??
              (cell.result.answer.tool_calls?.length
                ? `Calls ${cell.result.answer.tool_calls.map((c) => c.function.name).join(", ")}`
                : "")}
          </div>
          <p className="subtle small">
            {settingsSummary(cell.result.settings.model)} · first token {formatMs(cell.result.timing.ttft_ms)} · total{" "}
            {formatMs(cell.result.timing.total_ms)}
            {cell.result.usage ? ` · ${formatCount(cell.result.usage.total_tokens)} tokens` : ""}
          </p>
        </>
      ) : null}
      {cell.kind === "error" ? (
        <div className="form-alert" role="alert">
          <p>
            <strong>{ERROR_TITLES[cell.error.code] ?? "The run failed"}</strong>
          </p>
          <p>{cell.error.message}</p>
        </div>
      ) : null}
      {cell.kind === "waiting" ? (
        <p className="loading">
          <span className="spinner" aria-hidden="true" />
          Running…
        </p>
      ) : null}
      {cell.kind === "none" ? <p className="subtle">Not run on this version yet.</p> : null}
    </div>
  );
}
