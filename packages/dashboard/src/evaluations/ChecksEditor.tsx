import type { WebhookView } from "@promptstore/core/webhooks";
import { useId, useState } from "react";
import { type FieldError, isWithin } from "../api/errors";
import { type FormField, FormFields } from "../forms/FormFields";
import type { Form } from "../forms/useForm";
import { PromptSuggestions } from "../prompts/PromptPicker";
import { Field } from "../ui/Field";
import {
  blankCheck,
  CHECK_FIELDS,
  CHECK_LABELS,
  CHECK_TYPES,
  type CheckField,
  type CheckForm,
  type CheckType,
  checkNames,
} from "./check-form";

/** The form fields of one check: its type's, as `forms/FormFields` draws them, then its name. */
function fieldsOf(
  check: CheckForm,
  defaultName: string,
  endpoints: readonly WebhookView[] | undefined,
  promptsId: string,
): FormField<CheckForm>[] {
  const own = CHECK_FIELDS[check.type].map((field: CheckField): FormField<CheckForm> => {
    switch (field.kind) {
      case "checkbox":
        return { kind: "checkbox", name: field.name, label: field.label };
      case "select":
        return {
          kind: "select",
          name: field.name,
          label: field.label,
          ...(field.hint ? { hint: field.hint } : {}),
          options: [
            { value: "", label: endpoints === undefined ? "Loading the endpoints…" : "Choose an endpoint" },
            ...(endpoints ?? []).map((e) => ({
              value: e.id,
              label: `${e.url}${e.enabled ? "" : " (disabled)"}`,
            })),
          ],
        };
      case "textarea":
      case "json":
        return {
          kind: "textarea",
          name: field.name,
          label: field.label,
          rows: field.kind === "json" ? 4 : 2,
          optional: !field.required,
          mono: field.mono ?? field.kind === "json",
          spellCheck: false,
          ...(field.hint ? { hint: field.hint } : {}),
          ...(field.placeholder ? { placeholder: field.placeholder } : {}),
        };
      default:
        return {
          name: field.name,
          label: field.label,
          optional: !field.required,
          mono: field.mono ?? false,
          spellCheck: false,
          ...(field.kind === "number" ? { inputMode: "decimal" as const } : {}),
          ...(field.name === "prompt" ? { list: promptsId } : {}),
          ...(field.hint ? { hint: field.hint } : {}),
          ...(field.placeholder ? { placeholder: field.placeholder } : {}),
        };
    }
  });
  return [
    ...own,
    {
      name: "name",
      label: "Name",
      optional: true,
      maxLength: 100,
      placeholder: defaultName,
      hint: "How results name it; unique in the set.",
    },
  ];
}

/**
 * The check set: one group of fields per check (its type's fields, then its name), moved up and down, removed,
 * and added by type. Each group is a `FormFields` over the check's own values; the errors of `checks[i]` (the
 * form's and the server's) show beside the check's fields.
 */
export function ChecksEditor({
  projectId,
  checks,
  onChange,
  errors,
  endpoints,
  onNeedEndpoints,
}: {
  projectId: string;
  checks: CheckForm[];
  onChange: (checks: CheckForm[]) => void;
  errors: readonly FieldError[];
  endpoints: readonly WebhookView[] | undefined;
  /** A webhook check is shown: the project's endpoints are wanted. */
  onNeedEndpoints: () => void;
}) {
  const [adding, setAdding] = useState<CheckType>("contains");
  const addId = useId();
  const promptsId = useId();
  const names = checkNames(checks.map((c) => ({ type: c.type, name: c.name.trim() === "" ? undefined : c.name })));
  const typedNames = checkNames(checks.map((c) => ({ type: c.type })));
  const setCheck = (key: string, change: Partial<CheckForm>) =>
    onChange(checks.map((c) => (c.key === key ? { ...c, ...change } : c)));
  const move = (from: number, to: number) => {
    const next = [...checks];
    const [moved] = next.splice(from, 1);
    if (moved) next.splice(to, 0, moved);
    onChange(next);
  };
  const setError = errors.find((e) => e.field === "checks");
  const judgePrompt = checks.find((c) => c.type === "judge")?.prompt ?? "";

  return (
    <fieldset className="checks-editor" aria-describedby={setError ? `${addId}-set-error` : undefined}>
      <legend className="field-label">Checks</legend>
      <p className="field-hint">A case passes on a version when every check passes.</p>
      {setError ? (
        <p className="field-error" id={`${addId}-set-error`}>
          {setError.message}
        </p>
      ) : null}
      <ol className="check-list">
        {checks.map((check, i) => {
          const prefix = `checks[${i}]`;
          // This check's errors, named as its own fields are (`checks[2].value` is `value`).
          const own = errors
            .filter((e) => e.field !== null && isWithin(e.field, prefix))
            .map((e) => ({ field: (e.field as string).slice(prefix.length + 1) || null, message: e.message }));
          const form: Form<CheckForm> = {
            values: check,
            set: (name, value) => setCheck(check.key, { [name]: value } as Partial<CheckForm>),
            errors: own,
            show: () => {},
            refused: () => {},
          };
          const unplaced = own.filter((e) => e.field === null || e.field === "type");
          const title = `Check ${i + 1}: ${names[i]}`;
          return (
            <li key={check.key}>
              <fieldset className="check" aria-label={title}>
                <legend className="check-legend">
                  <span className="check-number">{i + 1}</span> {CHECK_LABELS[check.type]}
                </legend>
                <div className="check-actions">
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Move check ${i + 1} up`}
                    disabled={i === 0}
                    onClick={() => move(i, i - 1)}
                  >
                    Up
                  </button>
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Move check ${i + 1} down`}
                    disabled={i === checks.length - 1}
                    onClick={() => move(i, i + 1)}
                  >
                    Down
                  </button>
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Remove check ${i + 1}`}
                    onClick={() => onChange(checks.filter((c) => c.key !== check.key))}
                  >
                    Remove
                  </button>
                </div>
                {unplaced.map((e) => (
                  <p key={e.message} className="field-error">
                    {e.message}
                  </p>
                ))}
                <div className="check-fields">
                  <FormFields fields={fieldsOf(check, typedNames[i] ?? check.type, endpoints, promptsId)} form={form} />
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      {checks.some((c) => c.type === "judge") ? (
        <PromptSuggestions id={promptsId} projectId={projectId} typed={judgePrompt} />
      ) : null}
      <div className="check-add">
        <Field label="Add a check">
          {(control) => (
            <select
              {...control}
              className="select"
              value={adding}
              onChange={(e) => setAdding(e.target.value as CheckType)}
            >
              {CHECK_TYPES.map((type) => (
                <option key={type} value={type}>
                  {CHECK_LABELS[type]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button
          type="button"
          className="button"
          disabled={checks.length >= 20}
          onClick={() => {
            if (adding === "webhook") onNeedEndpoints();
            onChange([...checks, blankCheck(adding)]);
          }}
        >
          Add check
        </button>
      </div>
    </fieldset>
  );
}
