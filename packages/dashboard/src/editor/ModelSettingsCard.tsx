import { errorWithin, type FieldError } from "../api/errors";
import { LazyCodeEditor } from "./code/LazyCodeEditor";
import type { ModelCheck } from "./model-settings";

/** The version's model settings as JSON, checked as they are typed; empty for none. */
export function ModelSettingsCard({
  headingId,
  value,
  model,
  readOnly,
  errors,
  onChange,
}: {
  headingId: string;
  value: string;
  model: ModelCheck;
  readOnly: boolean;
  errors: FieldError[];
  onChange: (value: string) => void;
}) {
  const error = !model.ok ? model.error : errorWithin(errors, "model");
  const message = typeof error === "string" ? error : error ? `${error.field}: ${error.message}` : null;
  return (
    <section className="card card-body stack" aria-labelledby={`${headingId}-model`}>
      <div>
        <h3 id={`${headingId}-model`}>Model settings</h3>
        <p className="field-hint">
          Which model the prompt is written for, as a JSON object:{" "}
          <code>{'{ "name", "temperature", "top_p", "max_output_tokens", "stop", "response_format", "extra" }'}</code>.
          Only <code>name</code> is required; provider-specific settings go in <code>extra</code>. Leave it empty for
          none. The settings are part of the version.
        </p>
      </div>
      <LazyCodeEditor
        value={value}
        onChange={onChange}
        language="json"
        label="Model settings (JSON)"
        readOnly={readOnly}
        invalid={message !== null}
        description={message ?? "A JSON object of model settings; empty for none."}
      />
      <p className={message ? "field-error" : "field-hint"} aria-live="polite">
        {message ?? (model.ok ? (model.model ? `Valid: ${model.model.name}.` : "No model settings.") : "")}
      </p>
    </section>
  );
}
