import type { ModelSettings } from "@promptstore/core/prompts/content";
import { modelSettingsInput } from "@promptstore/core/prompts/model-settings";
import { validate } from "../forms/validate";

export type ModelCheck = { ok: true; model: ModelSettings | undefined } | { ok: false; error: string };

/** The settings JSON as typed: parsed, then checked with the server's own schema. Empty means none. */
export function checkModel(text: string): ModelCheck {
  if (text.trim() === "") return { ok: true, model: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `model: not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const result = validate(modelSettingsInput, parsed, "model");
  if (!result.ok) {
    const first = result.errors[0];
    // Fields are named from the settings' root; the API names them from the body's, as model.<field>.
    const own = first?.field;
    const field = !own || own === "model" ? "model" : `model${own.startsWith("[") ? "" : "."}${own}`;
    return { ok: false, error: `${field}: ${first?.message ?? "is invalid"}` };
  }
  return { ok: true, model: result.data as ModelSettings };
}

/** The settings as the editor shows them: pretty JSON, or nothing when the version has none. */
export const modelText = (model: ModelSettings | undefined): string =>
  model === undefined ? "" : JSON.stringify(model, null, 2);
