import { type FormEvent, useRef, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { useCreateExample, useUpdateExample } from "../api/example-queries";
import { useRevealErrors } from "../forms/useRevealErrors";
import { Dialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { errorText } from "../ui/States";
import type { ChatMessage, Example } from "./run-types";

const FIELDS = new Set(["name", "good_answer"]);

/**
 * Saves the playground's inputs as a named example, or renames an example and changes its note. The inputs
 * themselves are shown, not edited here: changing them drops the example's kept results (the server's rule).
 */
export function ExampleDialog({
  projectId,
  promptId,
  example,
  inputs,
  onClose,
}: {
  projectId: string;
  promptId: string;
  /** null: a new example from `inputs`. */
  example: Example | null;
  inputs: { variables: Record<string, string>; messages: ChatMessage[] };
  onClose: () => void;
}) {
  const create = useCreateExample(projectId, promptId);
  const update = useUpdateExample(projectId, promptId);
  const [name, setName] = useState(example?.name ?? "");
  const [goodAnswer, setGoodAnswer] = useState(example?.good_answer ?? "");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);
  const pending = create.isPending || update.isPending;
  const shown = example ?? inputs;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === "") return setErrors([{ field: "name", message: "is required" }]);
    setErrors([]);
    const onError = (error: unknown) =>
      setErrors([
        isApiError(error) ? { field: error.field, message: error.detail } : { field: null, message: errorText(error) },
      ]);
    const note = goodAnswer.trim() === "" ? null : goodAnswer;
    if (example) {
      update.mutate(
        { id: example.id, body: { name: name.trim(), good_answer: note } },
        { onSuccess: onClose, onError },
      );
    } else {
      create.mutate({ name: name.trim(), ...inputs, good_answer: note }, { onSuccess: onClose, onError });
    }
  };

  const variables = Object.entries(shown.variables);
  return (
    <Dialog title={example ? "Edit example" : "Save as example"} onClose={onClose}>
      <form ref={form} className="form" onSubmit={submit} noValidate aria-label="Example">
        <FormAlert messages={unplacedErrors(errors, (f) => FIELDS.has(f))} />
        <Field label="Name" error={errorFor(errors, "name")}>
          {(control) => (
            <input
              {...control}
              className="input"
              autoComplete="off"
              value={name}
              maxLength={200}
              onChange={(e) => setName(e.target.value)}
              data-autofocus
            />
          )}
        </Field>
        <Field
          label="What a good answer looks like"
          optional
          error={errorFor(errors, "good_answer")}
          hint="A note for whoever compares answers; it is not sent to the model."
        >
          {(control) => (
            <textarea
              {...control}
              className="textarea"
              rows={3}
              value={goodAnswer}
              maxLength={10_000}
              onChange={(e) => setGoodAnswer(e.target.value)}
            />
          )}
        </Field>
        <div className="example-inputs">
          <p className="field-label">Inputs</p>
          {variables.length === 0 && shown.messages.length === 0 ? (
            <p className="subtle">No variables, no messages.</p>
          ) : null}
          <ul className="example-input-list">
            {variables.map(([k, v]) => (
              <li key={`v-${k}`}>
                <span className="mono">{k}</span> = {v === "" ? <span className="subtle">(empty)</span> : v}
              </li>
            ))}
            {shown.messages.map((m, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the messages of one example, in order
              <li key={`m-${i}`}>
                <span className="badge badge-outline">{m.role}</span> {m.content}
              </li>
            ))}
          </ul>
        </div>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={pending} aria-busy={pending || undefined}>
            {example ? "Save" : "Save example"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
