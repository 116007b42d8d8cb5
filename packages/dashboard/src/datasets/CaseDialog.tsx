import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { type FormEvent, useRef, useState } from "react";
import { isApiError } from "../api/client";
import { type CaseView, type DatasetView, useAppendCases, useRewriteCases } from "../api/dataset-queries";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { useRevealErrors } from "../forms/useRevealErrors";
import { Dialog } from "../ui/Dialog";
import { BusyButton, Field, FormAlert, TextField } from "../ui/Field";
import { errorText } from "../ui/States";
import { type CaseForm, caseToForm, editedList, fieldOfEditedCase, formToCase, varRow } from "./case-form";

const SHOWN = new Set(["vars", "expected", "tags", "messages", "message"]);

/**
 * Adds a case at the end, or edits one: its variables (a name and a value a row), the expected answer, tags,
 * and the chat after the system prompt as JSON. A save is a new version of the dataset (appended, or the whole
 * list with this case changed), or none when the case is as it was.
 */
export function CaseDialog({
  projectId,
  dataset,
  editing,
  columns,
  onClose,
  onSaved,
}: {
  projectId: string;
  dataset: DatasetView;
  editing: CaseView | null;
  /** The dataset's variables: a new case gets a row for each. */
  columns: readonly string[];
  onClose: () => void;
  onSaved: (saved: { version: string; created: boolean; cases: number }) => void;
}) {
  const [form, setForm] = useState<CaseForm>(() => caseToForm(editing?.case ?? null, columns));
  const [message, setMessage] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const append = useAppendCases(projectId, dataset.id);
  const rewrite = useRewriteCases(projectId, dataset.id);
  const formRef = useRef<HTMLFormElement>(null);
  useRevealErrors(formRef, errors);
  const pending = append.isPending || rewrite.isPending;
  const title = editing ? `Edit case ${editing.position + 1}` : "Add a case";
  const set = (change: Partial<CaseForm>) => setForm((f) => ({ ...f, ...change }));

  const refused = (error: unknown, position: number) => {
    const field = isApiError(error) ? fieldOfEditedCase(error.field, position) : null;
    setErrors([
      isApiError(error)
        ? { field: field === "cases" ? null : field, message: error.detail }
        : { field: null, message: errorText(error) },
    ]);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const result = formToCase(form);
    if (!result.ok) return setErrors(result.errors);
    setErrors([]);
    const note = message.trim() === "" ? {} : { message: message.trim() };
    if (editing === null) {
      append.mutate(
        { cases: [result.value], base: dataset.version, ...note },
        { onSuccess: onSaved, onError: (error) => refused(error, 0) },
      );
    } else {
      rewrite.mutate(
        {
          head: dataset.version,
          change: (all: NormalCase[]) => editedList(all, editing.position, result.value),
          ...(note.message ? note : { message: `Edited case ${editing.position + 1}` }),
        },
        { onSuccess: onSaved, onError: (error) => refused(error, editing.position) },
      );
    }
  };

  return (
    <Dialog title={title} onClose={onClose}>
      <form ref={formRef} className="form case-form" onSubmit={submit} noValidate aria-label={title}>
        <FormAlert messages={unplacedErrors(errors, (f) => SHOWN.has(f))} />
        <fieldset className="case-vars" aria-describedby={errorFor(errors, "vars") ? "case-vars-error" : undefined}>
          <legend className="field-label">Variables</legend>
          {form.vars.map((row, i) => (
            <div key={row.key} className="case-var">
              <TextField
                label={`Name ${i + 1}`}
                mono
                value={row.name}
                {...(i === 0 ? { "data-autofocus": true } : {})}
                onChange={(name) => set({ vars: form.vars.map((r) => (r.key === row.key ? { ...r, name } : r)) })}
              />
              <Field label={`Value ${i + 1}`}>
                {(control) => (
                  <textarea
                    {...control}
                    className="textarea case-var-value"
                    rows={1}
                    value={row.value}
                    onChange={(e) =>
                      set({ vars: form.vars.map((r) => (r.key === row.key ? { ...r, value: e.target.value } : r)) })
                    }
                  />
                )}
              </Field>
              <button
                type="button"
                className="button button-small case-var-remove"
                aria-label={`Remove variable ${row.name || i + 1}`}
                onClick={() => set({ vars: form.vars.filter((r) => r.key !== row.key) })}
              >
                Remove
              </button>
            </div>
          ))}
          <div>
            <button
              type="button"
              className="button button-small"
              onClick={() => set({ vars: [...form.vars, varRow()] })}
            >
              Add variable
            </button>
          </div>
          {errorFor(errors, "vars") ? (
            <p className="field-error" id="case-vars-error">
              {errorFor(errors, "vars")}
            </p>
          ) : null}
        </fieldset>
        <Field
          label="Expected answer"
          optional
          error={errorFor(errors, "expected")}
          hint="What the expected check compares the answer with. Empty: none."
        >
          {(control) => (
            <textarea
              {...control}
              className="textarea"
              rows={3}
              value={form.expected}
              onChange={(e) => set({ expected: e.target.value })}
            />
          )}
        </Field>
        <TextField
          label="Tags"
          optional
          hint="Separated by commas."
          error={errorFor(errors, "tags")}
          value={form.tags}
          onChange={(tags) => set({ tags })}
        />
        <Field
          label="Chat"
          optional
          error={errorFor(errors, "messages")}
          hint='The messages after the system prompt, as JSON: [{ "role": "user", "content": "…" }]. Empty: none.'
        >
          {(control) => (
            <textarea
              {...control}
              className="textarea mono"
              rows={3}
              spellCheck={false}
              value={form.messages}
              onChange={(e) => set({ messages: e.target.value })}
            />
          )}
        </Field>
        <TextField
          label="Change note"
          optional
          maxLength={500}
          error={errorFor(errors, "message")}
          value={message}
          onChange={setMessage}
        />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" busy={pending}>
            {editing ? "Save case" : "Add case"}
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}
