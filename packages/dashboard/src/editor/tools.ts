import type { Tool } from "@promptstore/core/prompts/content";
import { toolsInput } from "@promptstore/core/schemas";
import { validate } from "../forms/validate";

export type ToolsCheck = { ok: true; tools: Tool[] } | { ok: false; error: string };

/** The tools JSON as typed: parsed, then checked with the server's own schema. Empty means no tools. */
export function checkTools(text: string): ToolsCheck {
  if (text.trim() === "") return { ok: true, tools: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `tools: not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const result = validate(toolsInput, parsed, "tools");
  if (!result.ok) {
    const first = result.errors[0];
    return { ok: false, error: first ? `${first.field ?? "tools"}: ${first.message}` : "tools: is invalid" };
  }
  return { ok: true, tools: result.data as Tool[] };
}

export const toolsText = (tools: readonly Tool[] | undefined): string => JSON.stringify(tools ?? [], null, 2);
