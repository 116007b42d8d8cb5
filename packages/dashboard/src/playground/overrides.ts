/**
 * The run's model overrides as typed (strings: empty means "as the version says") and their translation
 * into the `model` object of a run (docs/playground.md, "Model settings"). Pure, so it is unit-tested.
 */
import type { FieldError } from "../api/errors";
import type { ModelSettings, ResponseFormat } from "./run-types";

export interface OverridesForm {
  name: string;
  temperature: string;
  top_p: string;
  max_output_tokens: string;
  /** One stop sequence per line. */
  stop: string;
  /** "" keeps the version's format. */
  format: "" | "text" | "json_object" | "json_schema";
  /** The JSON Schema, when `format` is json_schema. */
  schema: string;
}

export const NO_OVERRIDES: OverridesForm = {
  name: "",
  temperature: "",
  top_p: "",
  max_output_tokens: "",
  stop: "",
  format: "",
  schema: "",
};

function number(
  text: string,
  field: string,
  check: (n: number) => string | null,
  errors: FieldError[],
): number | undefined {
  if (text.trim() === "") return undefined;
  const n = Number(text);
  const problem = Number.isFinite(n) ? check(n) : "must be a number";
  if (problem) {
    errors.push({ field: `model.${field}`, message: problem });
    return undefined;
  }
  return n;
}

/** The overrides to send (only what was filled in), or the fields that are wrong. */
export function toOverrides(
  form: OverridesForm,
): { ok: true; model: ModelSettings } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const model: ModelSettings = {};
  if (form.name.trim() !== "") model.name = form.name.trim();
  const temperature = number(
    form.temperature,
    "temperature",
    (n) => (n < 0 || n > 2 ? "must be from 0 to 2" : null),
    errors,
  );
  if (temperature !== undefined) model.temperature = temperature;
  const topP = number(form.top_p, "top_p", (n) => (n < 0 || n > 1 ? "must be from 0 to 1" : null), errors);
  if (topP !== undefined) model.top_p = topP;
  const max = number(
    form.max_output_tokens,
    "max_output_tokens",
    (n) => (Number.isInteger(n) && n >= 1 ? null : "must be a whole number of at least 1"),
    errors,
  );
  if (max !== undefined) model.max_output_tokens = max;
  const stop = form.stop.split("\n").filter((s) => s !== "");
  if (stop.length > 0) model.stop = stop;
  if (form.format === "text" || form.format === "json_object") model.response_format = { type: form.format };
  if (form.format === "json_schema") {
    let schema: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(form.schema);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
        schema = parsed as Record<string, unknown>;
      } else errors.push({ field: "model.response_format.json_schema.schema", message: "must be a JSON object" });
    } catch {
      errors.push({ field: "model.response_format.json_schema.schema", message: "is not valid JSON" });
    }
    if (schema !== undefined) {
      const format: ResponseFormat = { type: "json_schema", json_schema: { name: "answer", schema, strict: true } };
      model.response_format = format;
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, model };
}

/** How a settings object reads in one line: "gpt-4o-mini · temperature 0.2 · JSON". */
export function settingsSummary(model: ModelSettings | null | undefined): string {
  if (!model || Object.keys(model).length === 0) return "no model settings";
  const parts: string[] = [model.name ?? "no model named"];
  if (model.temperature !== undefined) parts.push(`temperature ${model.temperature}`);
  if (model.top_p !== undefined) parts.push(`top_p ${model.top_p}`);
  if (model.max_output_tokens !== undefined) parts.push(`max ${model.max_output_tokens} tokens`);
  if (model.stop && model.stop.length > 0)
    parts.push(`${model.stop.length} stop sequence${model.stop.length === 1 ? "" : "s"}`);
  if (model.response_format && model.response_format.type !== "text") {
    parts.push(model.response_format.type === "json_object" ? "JSON" : "JSON Schema");
  }
  return parts.join(" · ");
}

/** "840 ms", "1.24 s", "12.5 s". */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${s < 10 ? s.toFixed(2) : s.toFixed(1)} s`;
}
