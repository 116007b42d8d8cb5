import { MissingVariablesError, UnexpectedVariablesError } from "./errors.js";

/**
 * The server's variable rule (packages/core/src/prompts/variables.ts), kept in step by test/variables.test.ts: `{{`,
 * optional whitespace, a name (a letter or `_`, then letters, digits, `_`, `.` or `-`), optional whitespace,
 * `}}`. Anything else, such as `{{ 1st }}` or an unclosed `{{ name`, is plain text.
 */
const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** A value for a variable: numbers and booleans are written as `String(value)` writes them. */
export type VariableValue = string | number | boolean;

export interface FillOptions {
  /** Also refuse values for names the text does not reference ({@link UnexpectedVariablesError}). Default false. */
  strict?: boolean;
}

/** Anything with the assembled text: a prompt read with `get()`, or the text itself. */
export type Fillable = string | { prompt: string };

/**
 * Every `{{ name }}` of a text, each once, in order of first appearance, by the server's rule.
 *
 * @example
 * ```ts
 * import { variablesOf } from "@promptstore/client";
 * variablesOf("Hi {{ name }}, {{name}} works at {{ company.name }}"); // ["name", "company.name"]
 * ```
 */
export function variablesOf(text: string): string[] {
  const seen = new Set<string>();
  for (const match of text.matchAll(VARIABLE)) seen.add(match[1] as string);
  return [...seen];
}

/**
 * Replaces every `{{ name }}` of a prompt (or a text) with its value, by the server's variable rule.
 * Throws {@link MissingVariablesError} naming every variable without a value; with `strict`, also
 * {@link UnexpectedVariablesError} naming every value the text does not use. Values are inserted as they
 * are: a value that itself contains `{{ x }}` is not filled again.
 *
 * @example
 * ```ts
 * import { fill } from "@promptstore/client";
 * fill("You help customers of {{ company }}. Answer in {{ language }}.", { company: "Acme", language: "French" });
 * // "You help customers of Acme. Answer in French."
 * ```
 */
export function fill(
  prompt: Fillable,
  values: Readonly<Record<string, VariableValue>>,
  options: FillOptions = {},
): string {
  const text = typeof prompt === "string" ? prompt : prompt.prompt;
  const names = variablesOf(text);
  const missing = names.filter((name) => !Object.hasOwn(values, name));
  if (missing.length > 0) throw new MissingVariablesError(missing);
  if (options.strict) {
    const used = new Set(names);
    const unexpected = Object.keys(values).filter((name) => !used.has(name));
    if (unexpected.length > 0) throw new UnexpectedVariablesError(unexpected);
  }
  return text.replace(VARIABLE, (_whole, name: string) => String(values[name]));
}
