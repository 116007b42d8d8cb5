import { useEffect, useRef } from "react";
import { errorFor, type FieldError } from "../api/errors";
import { Field } from "../ui/Field";
import { type OverridesForm, settingsSummary } from "./overrides";
import type { ModelSettings } from "./run-types";

const placeholder = (value: unknown) => (value === undefined ? "as the version says" : `version: ${String(value)}`);

/**
 * The version's model settings, shown, and overrides for this run only (nothing here changes a version).
 * A closed `<details>` until needed: most runs use the version's settings as they are.
 */
export function ModelOverrides({
  version,
  models,
  form,
  errors,
  onChange,
}: {
  /** The settings of what runs first (the draft's or the version's); null when it has none. */
  version: ModelSettings | null;
  /** The models the chosen connection offers, suggested for the model name. */
  models: readonly string[];
  form: OverridesForm;
  errors: readonly FieldError[];
  onChange: (form: OverridesForm) => void;
}) {
  const set = (change: Partial<OverridesForm>) => onChange({ ...form, ...change });
  const overridden = Object.entries(form).filter(([key, value]) => key !== "schema" && value !== "").length;
  const listId = "playground-model-names";
  // Opened to show an error; left as the person set it otherwise (a controlled `open` would close it again).
  const details = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (errors.length > 0 && details.current) details.current.open = true;
  }, [errors]);
  return (
    <details ref={details} className="playground-settings">
      <summary>
        Model settings{" "}
        <span className="subtle">
          — {settingsSummary(version)}
          {overridden > 0 ? `; ${overridden} overridden for this run` : ""}
        </span>
      </summary>
      <div className="playground-settings-grid">
        <Field label="Model" error={errorFor(errors, "model.name")}>
          {(control) => (
            <>
              <input
                {...control}
                className="input mono"
                list={listId}
                autoComplete="off"
                spellCheck={false}
                placeholder={
                  version?.name === undefined && models[0] !== undefined
                    ? `connection's first: ${models[0]}`
                    : placeholder(version?.name)
                }
                value={form.name}
                onChange={(e) => set({ name: e.target.value })}
              />
              <datalist id={listId}>
                {models.map((m) => (
                  <option key={m} value={m} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label="Temperature" error={errorFor(errors, "model.temperature")}>
          {(control) => (
            <input
              {...control}
              className="input"
              inputMode="decimal"
              placeholder={placeholder(version?.temperature)}
              value={form.temperature}
              onChange={(e) => set({ temperature: e.target.value })}
            />
          )}
        </Field>
        <Field label="top_p" error={errorFor(errors, "model.top_p")}>
          {(control) => (
            <input
              {...control}
              className="input"
              inputMode="decimal"
              placeholder={placeholder(version?.top_p)}
              value={form.top_p}
              onChange={(e) => set({ top_p: e.target.value })}
            />
          )}
        </Field>
        <Field label="Max output tokens" error={errorFor(errors, "model.max_output_tokens")}>
          {(control) => (
            <input
              {...control}
              className="input"
              inputMode="numeric"
              placeholder={placeholder(version?.max_output_tokens)}
              value={form.max_output_tokens}
              onChange={(e) => set({ max_output_tokens: e.target.value })}
            />
          )}
        </Field>
        <Field label="Stop sequences" hint="One per line." error={errorFor(errors, "model.stop")}>
          {(control) => (
            <textarea
              {...control}
              className="textarea mono playground-stop"
              rows={1}
              placeholder={version?.stop?.length ? `version: ${version.stop.join(", ")}` : "as the version says"}
              value={form.stop}
              onChange={(e) => set({ stop: e.target.value })}
            />
          )}
        </Field>
        <Field label="Response format">
          {(control) => (
            <select
              {...control}
              className="select"
              value={form.format}
              onChange={(e) => set({ format: e.target.value as OverridesForm["format"] })}
            >
              <option value="">Version’s ({version?.response_format?.type ?? "text"})</option>
              <option value="text">Text</option>
              <option value="json_object">JSON</option>
              <option value="json_schema">JSON Schema</option>
            </select>
          )}
        </Field>
        {form.format === "json_schema" ? (
          <Field
            label="JSON Schema"
            className="playground-settings-wide"
            error={errorFor(errors, "model.response_format.json_schema.schema")}
          >
            {(control) => (
              <textarea
                {...control}
                className="textarea mono"
                rows={4}
                spellCheck={false}
                placeholder='{ "type": "object", "properties": { "answer": { "type": "string" } } }'
                value={form.schema}
                onChange={(e) => set({ schema: e.target.value })}
              />
            )}
          </Field>
        ) : null}
      </div>
    </details>
  );
}
