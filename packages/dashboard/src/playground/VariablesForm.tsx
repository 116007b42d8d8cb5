import { Field } from "../ui/Field";

/** One input per variable of what runs; an empty one is sent as written, so the model sees what is missing. */
export function VariablesForm({
  names,
  values,
  onChange,
}: {
  names: readonly string[];
  values: Readonly<Record<string, string>>;
  onChange: (values: Record<string, string>) => void;
}) {
  return (
    <fieldset className="playground-fieldset">
      <legend className="field-label">Variables</legend>
      {names.length === 0 ? (
        <p className="field-hint">No variables: the prompt runs as written.</p>
      ) : (
        <div className="playground-variables">
          {names.map((name) => (
            <Field key={name} label={<span className="mono">{name}</span>}>
              {(control) => (
                <textarea
                  {...control}
                  className="textarea playground-variable"
                  rows={1}
                  value={values[name] ?? ""}
                  onChange={(e) => onChange({ ...values, [name]: e.target.value })}
                />
              )}
            </Field>
          ))}
        </div>
      )}
    </fieldset>
  );
}
