import { can } from "@promptstore/core/accounts/permissions";
import type { Check } from "@promptstore/core/evaluations/checks";
import { EVALUATION_LIMITS } from "@promptstore/core/evaluations/constants";
import type { VersionList } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link } from "react-router";
import type { ModelConnection } from "../api/connection-queries";
import { type DatasetListItem, datasetVersionsQuery, useCreateDataset } from "../api/dataset-queries";
import { errorWithin, type FieldError, unplacedErrors } from "../api/errors";
import {
  type EvaluationDefaultsView,
  type EvaluationView,
  type StartEvaluationBody,
  useSaveDefaults,
  useStartEvaluation,
} from "../api/evaluation-queries";
import { examplesQuery } from "../api/example-queries";
import { webhooksQuery } from "../api/webhook-queries";
import type { HeldDraft } from "../editor/held-draft";
import { targetOptions } from "../playground/targets";
import { useProject } from "../shell/session";
import { BusyButton, Field, FormAlert } from "../ui/Field";
import { plural, shortHash } from "../ui/format";
import { fieldErrorOf } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { ChecksEditor } from "./ChecksEditor";
import { blankCheck, type CheckForm, checkToForm, formsToChecks, sameChecks } from "./check-form";
import { draftContent } from "./draft";
import { DRAFT, defaultVersions } from "./results";

/** The fields the form shows errors beside; any other error shows above them. */
const SHOWN = (field: string) =>
  /^versions(\[\d+\])?/.test(field) ||
  field.startsWith("checks") ||
  ["dataset", "connection", "model", "model.name", "concurrency"].includes(field);

/**
 * What an evaluation runs: one to four versions (the first is what the others are compared with), a dataset
 * and its version, the checks, and the connection and model; started here, refused field by field. The check
 * set, with the dataset, can be saved as the prompt's default, which this form starts from next time.
 */
export function SetupForm({
  projectId,
  promptId,
  list,
  connections,
  datasets,
  defaults,
  held,
  onStarted,
}: {
  projectId: string;
  promptId: string;
  list: VersionList;
  connections: ModelConnection[];
  datasets: DatasetListItem[];
  defaults: EvaluationDefaultsView;
  held: HeldDraft | null;
  onStarted: (view: EvaluationView) => void;
}) {
  const context = useProject();
  const start = useStartEvaluation(projectId, promptId);
  const saveDefaults = useSaveDefaults(projectId, promptId);
  const createDataset = useCreateDataset(projectId);
  const [versions, setVersions] = useState<string[]>(() => defaultVersions(list, held !== null));
  const firstDataset =
    defaults.dataset !== null && datasets.some((d) => d.id === defaults.dataset)
      ? defaults.dataset
      : (datasets[0]?.id ?? "");
  const [datasetId, setDatasetId] = useState(firstDataset);
  const [datasetVersion, setDatasetVersion] = useState("");
  const [connectionId, setConnectionId] = useState(connections[0]?.id ?? "");
  const [model, setModel] = useState("");
  const [guard, setGuard] = useState(true);
  const [concurrency, setConcurrency] = useState(String(EVALUATION_LIMITS.defaultConcurrency));
  const [checks, setChecks] = useState<CheckForm[]>(() =>
    defaults.checks && defaults.checks.length > 0 ? defaults.checks.map(checkToForm) : [blankCheck("expected")],
  );
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [savedNotice, setSavedNotice] = useState<string | null>(null);
  const [wantEndpoints, setWantEndpoints] = useState(() => checks.some((c) => c.type === "webhook"));
  const endpoints = useQuery({ ...webhooksQuery(projectId), enabled: wantEndpoints });
  const datasetVersions = useQuery({ ...datasetVersionsQuery(projectId, datasetId), enabled: datasetId !== "" });
  const examples = useQuery({ ...examplesQuery(projectId, promptId), enabled: datasets.length === 0 });
  const ids = {
    dataset: useId(),
    datasetVersion: useId(),
    connection: useId(),
    model: useId(),
    models: useId(),
    concurrency: useId(),
  };
  const canSaveDefaults = context !== null && can(context.role, "write");

  // The draft went (saved, or left behind): what named it names latest.
  const shownVersions = held === null ? versions.map((v) => (v === DRAFT ? "latest" : v)) : versions;
  const options = targetOptions(list, held !== null);
  const connection = connections.find((c) => c.id === connectionId) ?? connections[0];
  const checked = formsToChecks(checks);
  const isDefault = defaults.checks !== null && checked.ok && sameChecks(defaults.checks, checked.checks);
  const errorAt = (field: string) => errorWithin(errors, field)?.message;

  const body = (): StartEvaluationBody | FieldError[] => {
    const problems: FieldError[] = [];
    if (!checked.ok) problems.push(...checked.errors);
    if (datasetId === "") problems.push({ field: "dataset", message: "choose a dataset" });
    const n = Number(concurrency);
    if (!Number.isInteger(n) || n < 1 || n > EVALUATION_LIMITS.maxConcurrency) {
      problems.push({
        field: "concurrency",
        message: `must be a whole number from 1 to ${EVALUATION_LIMITS.maxConcurrency}`,
      });
    }
    const refs: StartEvaluationBody["versions"] = [];
    for (const [i, v] of shownVersions.entries()) {
      if (v !== DRAFT || held === null) {
        refs.push(v);
        continue;
      }
      const draft = draftContent(held);
      if (draft.ok) refs.push({ draft: draft.content });
      else
        problems.push({
          field: `versions[${i}]`,
          message: `the draft cannot run until it is fixed in Edit: ${draft.problem}`,
        });
    }
    if (problems.length > 0 || !checked.ok) return problems;
    return {
      versions: refs,
      dataset: datasetVersion === "" ? datasetId : `${datasetId}@${datasetVersion}`,
      checks: checked.checks,
      connection: connection?.id ?? "",
      ...(model.trim() === "" ? {} : { model: { name: model.trim() } }),
      guard,
      concurrency: n,
    };
  };

  const run = () => {
    if (start.isPending) return;
    const sent = body();
    if (Array.isArray(sent)) return setErrors(sent);
    setErrors([]);
    setSavedNotice(null);
    start.mutate(sent, { onSuccess: onStarted, onError: (error) => setErrors([fieldErrorOf(error)]) });
  };

  const saveAsDefault = () => {
    if (!checked.ok) return setErrors(checked.errors);
    setErrors([]);
    saveDefaults.mutate(
      { checks: checked.checks, dataset: datasetId === "" ? null : datasetId },
      {
        onSuccess: () =>
          setSavedNotice(
            "Saved as this prompt's default checks, with the dataset: everyone evaluating it starts from them.",
          ),
        onError: (error) => setErrors([fieldErrorOf(error)]),
      },
    );
  };

  const fromExamples = () =>
    createDataset.mutate(
      { name: `${promptId} examples`, source: { kind: "examples", promptId } },
      {
        onSuccess: (created) => setDatasetId(created.id),
        onError: (error) => setErrors([fieldErrorOf(error)]),
      },
    );

  const versionSelect = (value: string, i: number) => {
    const id = `${ids.dataset}-v${i}`;
    const error = errorAt(`versions[${i}]`);
    return (
      <div key={i} className="eval-version">
        <div className="field">
          <label className="field-label" htmlFor={id}>
            {i === 0 ? "Compared with (first)" : `Version ${i + 1}`}
          </label>
          <select
            id={id}
            className="select"
            value={value}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
            onChange={(e) => setVersions(shownVersions.map((v, j) => (j === i ? e.target.value : v)))}
          >
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
          {error ? (
            <p className="field-error" id={`${id}-error`}>
              {error}
            </p>
          ) : null}
        </div>
        {shownVersions.length > 1 ? (
          <button
            type="button"
            className="button button-small"
            aria-label={`Remove version ${i + 1}`}
            onClick={() => setVersions(shownVersions.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        ) : null}
      </div>
    );
  };

  const exampleCount = examples.data?.examples.length ?? 0;

  return (
    <form
      className="form eval-setup"
      aria-label="Evaluation"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        run();
      }}
      onKeyDown={(e) => {
        if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
          e.preventDefault();
          run();
        }
      }}
    >
      <FormAlert messages={unplacedErrors(errors, SHOWN)} />
      <fieldset className="eval-versions">
        <legend className="field-label">Versions</legend>
        <p className="field-hint">
          Up to {EVALUATION_LIMITS.versions}. Regressions and improvements are counted against the first.
          {held ? " The draft is the editor's, unsaved." : ""}
        </p>
        {shownVersions.map((v, i) => versionSelect(v, i))}
        {shownVersions.length < EVALUATION_LIMITS.versions ? (
          <div>
            <button
              type="button"
              className="button button-small"
              onClick={() =>
                setVersions([
                  ...shownVersions,
                  shownVersions.includes("latest") ? (list.versions[1]?.version ?? "latest") : "latest",
                ])
              }
            >
              Add version
            </button>
          </div>
        ) : null}
      </fieldset>

      <div className="eval-row">
        <Field label="Dataset" error={errorAt("dataset")}>
          {(control) =>
            datasets.length === 0 ? (
              <div className="eval-no-dataset" id={control.id}>
                <p className="small">
                  No dataset yet.{" "}
                  <Link to={`/p/${projectId}/datasets`} className="inline-link">
                    Create one in Datasets
                  </Link>
                  {exampleCount > 0
                    ? `, or turn this prompt's ${plural(exampleCount, "saved example")} into one:`
                    : "."}
                </p>
                {exampleCount > 0 ? (
                  <BusyButton
                    type="button"
                    className="button button-small"
                    busy={createDataset.isPending}
                    onClick={fromExamples}
                  >
                    Make a dataset of the saved examples
                  </BusyButton>
                ) : null}
              </div>
            ) : (
              <select
                {...control}
                className="select"
                value={datasetId}
                onChange={(e) => {
                  setDatasetId(e.target.value);
                  setDatasetVersion("");
                }}
              >
                {datasets.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name} ({plural(d.cases, "case")})
                  </option>
                ))}
              </select>
            )
          }
        </Field>
        {datasetId !== "" && datasets.length > 0 ? (
          <Field label="Dataset version">
            {(control) => (
              <select
                {...control}
                className="select"
                value={datasetVersion}
                onChange={(e) => setDatasetVersion(e.target.value)}
              >
                <option value="">
                  Newest{datasetVersions.data ? ` (${shortHash(datasetVersions.data.head)})` : ""}
                </option>
                {(datasetVersions.data?.versions ?? []).map((v) => (
                  <option key={v.version} value={v.version}>
                    {shortHash(v.version)} — {plural(v.cases, "case")}
                    {v.message ? `, ${v.message}` : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
      </div>

      <ChecksEditor
        projectId={projectId}
        checks={checks}
        onChange={(next) => {
          setSavedNotice(null);
          setChecks(next);
        }}
        errors={errors}
        endpoints={endpoints.data?.webhooks}
        onNeedEndpoints={() => setWantEndpoints(true)}
      />
      <div className="eval-defaults">
        <p className="small" aria-live="polite">
          {savedNotice ??
            (isDefault
              ? `These are this prompt's default checks${defaults.updated_by ? `, saved by ${defaults.updated_by.replace(/^user:/, "")}` : ""}`
              : defaults.checks === null
                ? "This prompt has no default checks yet."
                : "These checks differ from this prompt's default.")}
          {isDefault && !savedNotice && defaults.updated_at ? (
            <>
              {" "}
              <TimeAgo iso={defaults.updated_at} />.
            </>
          ) : null}
        </p>
        {canSaveDefaults ? (
          <span className="row">
            {defaults.checks !== null && !isDefault ? (
              <button
                type="button"
                className="button button-small"
                onClick={() => {
                  setChecks((defaults.checks as Check[]).map(checkToForm));
                  setErrors([]);
                }}
              >
                Use the default
              </button>
            ) : null}
            <BusyButton
              type="button"
              className="button button-small"
              busy={saveDefaults.isPending}
              onClick={saveAsDefault}
            >
              Save as the prompt's default
            </BusyButton>
          </span>
        ) : null}
      </div>

      <div className="eval-row">
        <Field label="Connection" error={errorAt("connection")}>
          {(control) => (
            <select
              {...control}
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
          )}
        </Field>
        <Field
          label="Model"
          optional
          error={errorAt("model")}
          hint="Empty: each version's own model, else the connection's first."
        >
          {(control) => (
            <>
              <input
                {...control}
                className="input mono"
                list={ids.models}
                autoComplete="off"
                spellCheck={false}
                value={model}
                placeholder={connection?.models[0] ?? ""}
                onChange={(e) => setModel(e.target.value)}
              />
              <datalist id={ids.models}>
                {(connection?.models ?? []).map((m) => (
                  <option key={m} value={m} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label="Calls at once" error={errorAt("concurrency")} className="eval-concurrency">
          {(control) => (
            <input
              {...control}
              className="input"
              inputMode="numeric"
              value={concurrency}
              onChange={(e) => setConcurrency(e.target.value)}
            />
          )}
        </Field>
      </div>
      <label className="checkbox">
        <input type="checkbox" checked={guard} onChange={(e) => setGuard(e.target.checked)} />
        Append the guard to the system prompt, as runs do
      </label>
      <div className="eval-actions">
        <BusyButton type="submit" busy={start.isPending}>
          Run evaluation
        </BusyButton>
        <span className="subtle small">
          Ctrl+Enter runs. Answers already kept for the same content are not asked again.
        </span>
      </div>
    </form>
  );
}
