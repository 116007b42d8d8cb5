import type { FormField } from "../forms/FormFields";
import type { FormatChoice } from "./file-preview";

/** The format select of every form that takes cases as JSONL or CSV (its name is `format` in each form's values). */
export function formatField<V extends { format: FormatChoice }>(): FormField<V> {
  return {
    kind: "select",
    name: "format",
    label: "Format",
    options: [
      { value: "auto", label: "Recognize it" },
      { value: "jsonl", label: "JSONL: one case per line" },
      { value: "csv", label: "CSV with a header row" },
    ],
  } as unknown as FormField<V>;
}
