import type { FieldError } from "../api/errors";
import { errorFor } from "../api/errors";
import { Field } from "../ui/Field";

/** The prompt's name and description: they belong to the prompt, not to a version. */
export function DetailsCard({
  headingId,
  name,
  description,
  readOnly,
  errors,
  onChange,
}: {
  headingId: string;
  name: string;
  description: string;
  readOnly: boolean;
  errors: FieldError[];
  onChange: (change: { name: string } | { description: string }) => void;
}) {
  return (
    <section className="card card-body stack" aria-labelledby={`${headingId}-details`}>
      <h3 id={`${headingId}-details`}>Details</h3>
      <p className="field-hint">The name and description belong to the prompt, not to a version.</p>
      <Field label="Name" error={errorFor(errors, "name")}>
        {(control) => (
          <input
            {...control}
            className="input"
            value={name}
            readOnly={readOnly}
            onChange={(e) => onChange({ name: e.target.value })}
            autoComplete="off"
          />
        )}
      </Field>
      <Field label="Description" error={errorFor(errors, "description")}>
        {(control) => (
          <textarea
            {...control}
            className="textarea"
            rows={2}
            value={description}
            readOnly={readOnly}
            onChange={(e) => onChange({ description: e.target.value })}
          />
        )}
      </Field>
    </section>
  );
}
