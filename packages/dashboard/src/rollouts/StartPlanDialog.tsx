import { type FormEvent, useRef, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { useStartPlan } from "../api/plan-queries";
import { useRequestRelease } from "../api/release-queries";
import { useRevealErrors } from "../forms/useRevealErrors";
import type { Version } from "../history/versions";
import { Dialog } from "../ui/Dialog";
import { BusyButton, Field, FormAlert } from "../ui/Field";
import { shortHash } from "../ui/format";
import { errorText } from "../ui/States";
import { DEFAULT_PLAN, formField, type PlanFormValues, planBody, type StepValues } from "./plan-form";

interface StartPlanDialogProps {
  projectId: string;
  promptId: string;
  label: string;
  versions: readonly Version[];
  /** What the label serves now: the current arm. */
  current: string;
  /** A protected label starts a plan only from an approved release request: the form asks for one. */
  isProtected: boolean;
  onClose: () => void;
  onDone: (notice: string) => void;
}

/** Each step's inputs: the column's title, and the name an input is read by ("Step 2 minimum minutes"). */
const STEP_FIELDS: { key: keyof StepValues; field: string; title: string; name: string }[] = [
  { key: "percent", field: "percent", title: "Percent", name: "percent" },
  { key: "minutes", field: "min_duration_seconds", title: "Min. minutes", name: "minimum minutes" },
  { key: "outcomes", field: "min_outcomes", title: "Min. outcomes", name: "minimum outcomes" },
];

const GUARDRAIL_FIELDS: {
  key: "okRatePoints" | "scoreDrop" | "latencyPercent";
  field: string;
  title: string;
  hint: string;
}[] = [
  { key: "okRatePoints", field: "ok_rate_drop", title: "Ok rate drop (points)", hint: "2.5 allows 95% → 92.5%." },
  { key: "scoreDrop", field: "score_drop", title: "Score drop", hint: "On the 0 to 1 scale." },
  {
    key: "latencyPercent",
    field: "latency_p95_increase",
    title: "Latency p95 increase (%)",
    hint: "20 or more: latencies are kept in 9% buckets.",
  },
];

/**
 * Starts a rollout plan on a label (docs/rollouts.md "Plans"): the candidate, the steps with their minimum
 * duration and outcomes, and the guardrails. The server judges the request and its messages go beside the
 * field they name. On a protected label the same form asks for a release whose approval starts the plan.
 */
export function StartPlanDialog({
  projectId,
  promptId,
  label,
  versions,
  current,
  isProtected,
  onClose,
  onDone,
}: StartPlanDialogProps) {
  const start = useStartPlan(projectId, promptId, label);
  const request = useRequestRelease(projectId, promptId);
  const candidates = versions.filter((v) => v.version !== current);
  const [version, setVersion] = useState(candidates[0]?.version ?? "");
  const [values, setValues] = useState<PlanFormValues>(DEFAULT_PLAN);
  const [message, setMessage] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);
  const pending = start.isPending || request.isPending;
  const title = isProtected ? `Request a plan on ${label}` : `Start a rollout plan on ${label}`;

  const setStep = (i: number, key: keyof StepValues, value: string) =>
    setValues((v) => ({ ...v, steps: v.steps.map((s, j) => (j === i ? { ...s, [key]: value } : s)) }));
  const shown = (field: string) =>
    field === "version" ||
    (!isProtected ? false : field === "message") ||
    /^steps\[\d+\]\.(percent|min_duration_seconds|min_outcomes)$/.test(field) ||
    /^guardrails\.(ok_rate_drop|score_drop|latency_p95_increase)$/.test(field);
  const failed = (error: unknown) =>
    setErrors([
      isApiError(error)
        ? { field: formField(error.field), message: error.detail }
        : { field: null, message: errorText(error) },
    ]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setErrors([]);
    const body = planBody(version, values);
    if (isProtected) {
      const { version: v, ...plan } = body;
      request.mutate(
        { label, version: v, plan, ...(message.trim() ? { message: message.trim() } : {}) } as Parameters<
          typeof request.mutate
        >[0],
        {
          onSuccess: (release) =>
            onDone(
              `Release requested: ${label} to ${shortHash(release.version)} by a plan of ${body.steps.length} steps. An owner approves it under Releases.`,
            ),
          onError: failed,
        },
      );
      return;
    }
    start.mutate(body, {
      onSuccess: (plan) =>
        onDone(`The plan on ${label} started: ${shortHash(plan.version)} gets ${plan.percent}% of reads.`),
      onError: failed,
    });
  };

  return (
    <Dialog title={title} onClose={onClose}>
      <form ref={form} className="form" onSubmit={submit} noValidate aria-label={title}>
        <Field
          label="Candidate version"
          error={errorFor(errors, "version")}
          hint={`${label} serves ${shortHash(current)} now.`}
        >
          {(control) => (
            <select
              {...control}
              className="select mono"
              value={version}
              onChange={(e) => setVersion(e.target.value)}
              data-autofocus
            >
              {candidates.map((v) => (
                <option key={v.version} value={v.version}>
                  {shortHash(v.version)} — {v.message ?? "no message"}
                </option>
              ))}
            </select>
          )}
        </Field>
        <fieldset className="plan-fieldset">
          <legend className="field-label">Steps</legend>
          <p className="field-hint">
            The candidate's share of reads, step by step. A step lasts at least its minutes and waits for its candidate
            outcomes; then, if every guardrail holds, the plan advances. A breached guardrail aborts at once.
          </p>
          <div className="table-wrap">
            <table className="table plan-steps-table">
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  {STEP_FIELDS.map((f) => (
                    <th key={f.key} scope="col">
                      {f.title}
                    </th>
                  ))}
                  <th scope="col">
                    <span className="visually-hidden">Remove</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {values.steps.map((s, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a step is its position in the plan
                  <tr key={i}>
                    <th scope="row">{i + 1}</th>
                    {STEP_FIELDS.map((f) => {
                      const error = errorFor(errors, `steps[${i}].${f.field}`);
                      const errorId = `plan-step-${i}-${f.key}-error`;
                      return (
                        <td key={f.key}>
                          <input
                            className="input"
                            type="number"
                            inputMode="numeric"
                            aria-label={`Step ${i + 1} ${f.name}`}
                            aria-invalid={error ? true : undefined}
                            aria-describedby={error ? errorId : undefined}
                            value={s[f.key]}
                            onChange={(e) => setStep(i, f.key, e.target.value)}
                          />
                          {error ? (
                            <p className="field-error" id={errorId}>
                              {error}
                            </p>
                          ) : null}
                        </td>
                      );
                    })}
                    <td>
                      <button
                        type="button"
                        className="button button-small button-ghost"
                        aria-label={`Remove step ${i + 1}`}
                        title="Remove this step"
                        disabled={values.steps.length === 1}
                        onClick={() => setValues((v) => ({ ...v, steps: v.steps.filter((_, j) => j !== i) }))}
                      >
                        ✕
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <button
            type="button"
            className="button button-small plan-add-step"
            onClick={() =>
              setValues((v) => ({ ...v, steps: [...v.steps, { percent: "", minutes: "10", outcomes: "0" }] }))
            }
          >
            Add a step
          </button>
        </fieldset>
        <fieldset className="plan-fieldset">
          <legend className="field-label">Guardrails</legend>
          <p className="field-hint">
            How much worse than {shortHash(current)} the candidate may be. Leave empty for none.
          </p>
          <div className="plan-guardrail-fields">
            {GUARDRAIL_FIELDS.map((g) => (
              <Field key={g.key} label={g.title} hint={g.hint} error={errorFor(errors, `guardrails.${g.field}`)}>
                {(control) => (
                  <input
                    {...control}
                    className="input"
                    type="number"
                    inputMode="decimal"
                    value={values[g.key]}
                    onChange={(e) => setValues((v) => ({ ...v, [g.key]: e.target.value }))}
                  />
                )}
              </Field>
            ))}
          </div>
        </fieldset>
        {isProtected ? (
          <Field label="Message" optional error={errorFor(errors, "message")} hint="Why, for whoever approves it.">
            {(control) => (
              <textarea
                {...control}
                className="textarea"
                rows={2}
                value={message}
                onChange={(e) => setMessage(e.target.value)}
              />
            )}
          </Field>
        ) : null}
        <p>
          {isProtected
            ? `${label} is protected: the plan starts when an owner other than you approves it, and the approval covers every step.`
            : `${label} rolls the candidate out to the first step's share now.`}
        </p>
        <FormAlert messages={unplacedErrors(errors, shown)} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" busy={pending}>
            {isProtected ? "Request release" : "Start plan"}
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}
