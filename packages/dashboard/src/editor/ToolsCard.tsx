import { errorWithin, type FieldError } from "../api/errors";
import { LazyCodeEditor } from "./code/LazyCodeEditor";
import type { checkTools } from "./tools";

/** The version's tools as JSON, checked as they are typed. */
export function ToolsCard({
  headingId,
  value,
  tools,
  readOnly,
  errors,
  onChange,
}: {
  headingId: string;
  value: string;
  tools: ReturnType<typeof checkTools>;
  readOnly: boolean;
  errors: FieldError[];
  onChange: (value: string) => void;
}) {
  const toolsError = !tools.ok ? tools.error : errorWithin(errors, "tools");
  const toolsMessage =
    typeof toolsError === "string" ? toolsError : toolsError ? `${toolsError.field}: ${toolsError.message}` : null;
  return (
    <section className="card card-body stack" aria-labelledby={`${headingId}-tools`}>
      <div>
        <h3 id={`${headingId}-tools`}>Tools</h3>
        <p className="field-hint" id={`${headingId}-tools-hint`}>
          Function tools for the model, as a JSON array of{" "}
          <code>{'{ "type": "function", "function": { "name", "description", "parameters" } }'}</code>. Use{" "}
          <code>[]</code> for none.
        </p>
      </div>
      <LazyCodeEditor
        value={value}
        onChange={onChange}
        language="json"
        label="Tools (JSON)"
        readOnly={readOnly}
        invalid={toolsMessage !== null}
        description={toolsMessage ?? "A JSON array of function tools; [] for none."}
      />
      <p id={`${headingId}-tools-status`} className={toolsMessage ? "field-error" : "field-hint"} aria-live="polite">
        {toolsMessage ??
          (tools.ok
            ? `Valid: ${tools.tools.length === 0 ? "no tools" : `${tools.tools.length} tool${tools.tools.length === 1 ? "" : "s"}`}.`
            : "")}
      </p>
    </section>
  );
}
