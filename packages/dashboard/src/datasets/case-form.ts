/**
 * A dataset case as a form edits it, and back (docs/evaluations.md, "Datasets": `vars`, `messages`?,
 * `expected`?, `tags`?), and the list a save sends. Pure, so it is unit-tested. The server checks the case again
 * (its sizes, the messages' shape) and its refusal names the field, which the form shows beside it.
 */
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { DATASET_LIMITS } from "@promptstore/core/evaluations/constants";
import type { FieldError } from "../api/errors";

export interface VarRow {
  /** A React key: rows are added and removed. */
  key: number;
  name: string;
  value: string;
}

export interface CaseForm {
  vars: VarRow[];
  /** Empty: the case has no expected answer. */
  expected: string;
  /** Comma-separated. */
  tags: string;
  /** The chat after the system prompt, as JSON; empty: none. */
  messages: string;
}

let rowKey = 0;
export const varRow = (name = "", value = ""): VarRow => ({ key: ++rowKey, name, value });

/** The form of a case; a new case gets a row for each of `columns` (the dataset's variables). */
export function caseToForm(value: NormalCase | null, columns: readonly string[] = []): CaseForm {
  if (value === null) {
    return {
      vars: (columns.length > 0 ? columns : [""]).map((name) => varRow(name)),
      expected: "",
      tags: "",
      messages: "",
    };
  }
  return {
    vars: Object.entries(value.vars).map(([name, v]) => varRow(name, v)),
    expected: value.expected ?? "",
    tags: (value.tags ?? []).join(", "),
    messages: value.messages && value.messages.length > 0 ? JSON.stringify(value.messages, null, 2) : "",
  };
}

export type CaseResult = { ok: true; value: NormalCase } | { ok: false; errors: FieldError[] };

/**
 * The case the form describes, in the one form the server stores (tags sorted, once each; no empty lists), or
 * what is wrong, each problem named by the field the form shows it at (`vars`, `tags`, `messages`).
 */
export function formToCase(form: CaseForm): CaseResult {
  const errors: FieldError[] = [];
  const vars: Record<string, string> = {};
  for (const [i, row] of form.vars.entries()) {
    const name = row.name.trim();
    if (name === "" && row.value === "") continue;
    if (name === "") errors.push({ field: "vars", message: `row ${i + 1} has a value but no name` });
    else if (Object.hasOwn(vars, name))
      errors.push({ field: "vars", message: `${JSON.stringify(name)} is named twice` });
    else vars[name] = row.value;
  }
  const tags = [
    ...new Set(
      form.tags
        .split(",")
        .map((t) => t.trim())
        .filter((t) => t !== ""),
    ),
  ].sort();
  if (tags.length > DATASET_LIMITS.tagsPerCase) {
    errors.push({ field: "tags", message: `must hold at most ${DATASET_LIMITS.tagsPerCase} tags` });
  }
  const long = tags.find((t) => t.length > DATASET_LIMITS.tagLength);
  if (long !== undefined) {
    errors.push({
      field: "tags",
      message: `${JSON.stringify(long.slice(0, 20))}… is longer than ${DATASET_LIMITS.tagLength} characters`,
    });
  }
  let messages: unknown[] | undefined;
  if (form.messages.trim() !== "") {
    try {
      const parsed: unknown = JSON.parse(form.messages);
      if (!Array.isArray(parsed))
        errors.push({
          field: "messages",
          message: 'must be a JSON array of messages: [{ "role": "user", "content": "…" }]',
        });
      else messages = parsed;
    } catch (error) {
      errors.push({ field: "messages", message: `is not valid JSON: ${(error as Error).message}` });
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const value: NormalCase = { vars };
  if (messages !== undefined && messages.length > 0) value.messages = messages as NonNullable<NormalCase["messages"]>;
  if (form.expected !== "") value.expected = form.expected;
  if (tags.length > 0) value.tags = tags;
  return { ok: true, value };
}

/** The cases with the one at `position` replaced (or removed, with null). */
export function editedList(
  cases: readonly NormalCase[],
  position: number,
  replacement: NormalCase | null,
): NormalCase[] {
  if (position < 0 || position >= cases.length) throw new RangeError(`no case at position ${position}`);
  return replacement === null
    ? [...cases.slice(0, position), ...cases.slice(position + 1)]
    : [...cases.slice(0, position), replacement, ...cases.slice(position + 1)];
}

/**
 * A refusal of a whole list, as the field of the one case the form edits: `cases[12].vars.company` is the form's
 * `vars` when case 12 is the one edited; another case's problem stays whole (it shows above the fields).
 */
export function fieldOfEditedCase(field: string | null, position: number): string | null {
  if (field === null) return null;
  const prefix = `cases[${position}]`;
  if (field === prefix) return null;
  if (!field.startsWith(`${prefix}.`)) return field;
  const rest = field.slice(prefix.length + 1);
  return rest.split(/[.[]/)[0] ?? rest;
}
