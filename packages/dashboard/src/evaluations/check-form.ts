/**
 * The check editor's data (docs/evaluations.md, "Checks"): each check type's fields as form fields, a check as
 * the form holds it (every value a string or a tick), and back. Pure, so it is unit-tested. What a form can tell
 * (a required field blank, JSON that does not parse, a number that is not one) it says here, in the server's
 * words; the server checks the rest (a pattern RE2 refuses, a judge prompt that is not there) and names the
 * field (`checks[2].pattern: …`), which the editor shows beside it.
 */
import type { Check } from "@promptstore/core/evaluations/checks";
import { CHECK_LIMITS, CHECK_TYPES, type CheckType } from "@promptstore/core/evaluations/constants";
import type { FieldError } from "../api/errors";

export { CHECK_TYPES, type CheckType };

/** A check as the editor holds it: every field of every type (only its type's are sent). */
export type CheckForm = {
  /** A React key, not sent. */
  key: string;
  type: CheckType;
  name: string;
  value: string;
  trim: boolean;
  case_insensitive: boolean;
  pattern: string;
  flags: string;
  schema: string;
  function: string;
  arguments: string;
  prompt: string;
  version: string;
  pass_score: string;
  endpoint: string;
};

type TextName =
  | "name"
  | "value"
  | "pattern"
  | "flags"
  | "schema"
  | "function"
  | "arguments"
  | "prompt"
  | "version"
  | "pass_score"
  | "endpoint";
type TickName = "trim" | "case_insensitive";

/** One field of a check type, as `forms/FormFields` draws it. */
export type CheckField =
  | {
      kind: "text" | "textarea" | "number" | "json";
      name: TextName;
      label: string;
      hint?: string;
      required?: boolean;
      mono?: boolean;
      placeholder?: string;
    }
  | { kind: "select"; name: "endpoint"; label: string; hint?: string; required: true }
  | { kind: "checkbox"; name: TickName; label: string };

export const CHECK_LABELS: Record<CheckType, string> = {
  expected: "Equals the case's expected answer",
  equals: "Equals a text",
  contains: "Contains a text",
  not_contains: "Does not contain a text",
  regex: "Matches a pattern",
  json: "Is JSON",
  json_schema: "Matches a JSON Schema",
  tool_call: "Calls a tool",
  max_chars: "At most N characters",
  judge: "A judge prompt scores it",
  webhook: "Your endpoint decides",
};

const TRIM: CheckField = { kind: "checkbox", name: "trim", label: "Trim spaces and line breaks at both ends first" };
const FOLD: CheckField = { kind: "checkbox", name: "case_insensitive", label: "Ignore upper and lower case" };

/** Each type's fields, in the order they show, after the type and before the name. */
export const CHECK_FIELDS: Record<CheckType, readonly CheckField[]> = {
  expected: [TRIM, FOLD],
  equals: [{ kind: "textarea", name: "value", label: "Text", hint: "The whole answer must be this." }, TRIM, FOLD],
  contains: [{ kind: "text", name: "value", label: "Text", required: true }, FOLD],
  not_contains: [{ kind: "text", name: "value", label: "Text", required: true }, FOLD],
  regex: [
    {
      kind: "text",
      name: "pattern",
      label: "Pattern",
      required: true,
      mono: true,
      hint: "RE2 syntax (no lookaround or backreferences); found anywhere in the answer.",
    },
    {
      kind: "text",
      name: "flags",
      label: "Flags",
      mono: true,
      placeholder: "i",
      hint: "Any of i (case), m (multi-line), s (dot matches line breaks).",
    },
  ],
  json: [],
  json_schema: [
    {
      kind: "json",
      name: "schema",
      label: "JSON Schema",
      mono: true,
      hint: "Empty: the version's own response_format schema.",
      placeholder: '{ "type": "object", "required": ["answer"] }',
    },
  ],
  tool_call: [
    { kind: "text", name: "function", label: "Function", required: true, mono: true },
    {
      kind: "json",
      name: "arguments",
      label: "With arguments",
      mono: true,
      hint: "A JSON object; the call's arguments must include each key with an equal value. Empty: any.",
    },
  ],
  max_chars: [{ kind: "number", name: "value", label: "Characters", required: true, placeholder: "500" }],
  judge: [
    {
      kind: "text",
      name: "prompt",
      label: "Judge prompt",
      required: true,
      mono: true,
      hint: "A prompt of this project that scores {{ answer }} from 0 to 1.",
    },
    {
      kind: "text",
      name: "version",
      label: "Version",
      mono: true,
      placeholder: "production",
      hint: "A label, latest, or a hash. Empty: production.",
    },
    {
      kind: "number",
      name: "pass_score",
      label: "Passes at",
      placeholder: "0.5",
      hint: "A score from 0 to 1. Empty: 0.5.",
    },
  ],
  webhook: [
    {
      kind: "select",
      name: "endpoint",
      label: "Endpoint",
      required: true,
      hint: "One of the project's webhook endpoints; each answer is POSTed to it, signed.",
    },
  ],
};

let keys = 0;
const nextKey = () => `check-${++keys}`;

/** A blank check of `type`. */
export function blankCheck(type: CheckType): CheckForm {
  return {
    key: nextKey(),
    type,
    name: "",
    value: "",
    trim: type === "expected",
    case_insensitive: false,
    pattern: "",
    flags: "",
    schema: "",
    function: "",
    arguments: "",
    prompt: "",
    version: "",
    pass_score: "",
    endpoint: "",
  };
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A check of the API as the form holds it. */
export function checkToForm(check: Check): CheckForm {
  const form = blankCheck(check.type);
  form.trim = false;
  form.name = check.name ?? "";
  switch (check.type) {
    case "equals":
      form.value = check.value;
      form.trim = check.trim ?? false;
      form.case_insensitive = check.case_insensitive ?? false;
      break;
    case "expected":
      form.trim = check.trim ?? false;
      form.case_insensitive = check.case_insensitive ?? false;
      break;
    case "contains":
    case "not_contains":
      form.value = check.value;
      form.case_insensitive = check.case_insensitive ?? false;
      break;
    case "regex":
      form.pattern = check.pattern;
      form.flags = check.flags ?? "";
      break;
    case "json_schema":
      form.schema = check.schema === undefined ? "" : json(check.schema);
      break;
    case "tool_call":
      form.function = check.function;
      form.arguments = check.arguments === undefined ? "" : json(check.arguments);
      break;
    case "max_chars":
      form.value = String(check.value);
      break;
    case "judge":
      form.prompt = check.prompt;
      form.version = check.version ?? "";
      form.pass_score = check.pass_score === undefined ? "" : String(check.pass_score);
      break;
    case "webhook":
      form.endpoint = check.endpoint;
      break;
    case "json":
      break;
  }
  return form;
}

/** A JSON object typed in a field, or the problem with it. */
function objectOf(text: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return `is not valid JSON: ${(error as Error).message}`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return "must be a JSON object";
  return parsed as Record<string, unknown>;
}

export type ChecksResult = { ok: true; checks: Check[] } | { ok: false; errors: FieldError[] };

/**
 * The check set the forms describe, or every problem a form can tell, each named as the server names it
 * (`checks[1].value: is required`), so it shows beside the same field as the server's own refusal would.
 */
export function formsToChecks(forms: readonly CheckForm[]): ChecksResult {
  const errors: FieldError[] = [];
  const checks: Check[] = [];
  if (forms.length === 0) errors.push({ field: "checks", message: "must hold at least one check" });
  if (forms.length > CHECK_LIMITS.checksPerSet) {
    errors.push({ field: "checks", message: `must hold at most ${CHECK_LIMITS.checksPerSet} checks` });
  }
  forms.forEach((form, i) => {
    const at = (field: string, message: string) => errors.push({ field: `checks[${i}].${field}`, message });
    for (const field of CHECK_FIELDS[form.type]) {
      if (field.kind !== "checkbox" && field.required && String(form[field.name]).trim() === "")
        at(field.name, "is required");
    }
    const named = form.name.trim() === "" ? {} : { name: form.name.trim() };
    const flags = form.case_insensitive ? { case_insensitive: true } : {};
    switch (form.type) {
      case "equals":
        checks.push({ type: "equals", ...named, value: form.value, ...(form.trim ? { trim: true } : {}), ...flags });
        break;
      case "expected":
        checks.push({ type: "expected", ...named, ...(form.trim ? { trim: true } : {}), ...flags });
        break;
      case "contains":
      case "not_contains":
        checks.push({ type: form.type, ...named, value: form.value, ...flags });
        break;
      case "regex":
        checks.push({
          type: "regex",
          ...named,
          pattern: form.pattern,
          ...(form.flags.trim() ? { flags: form.flags.trim() } : {}),
        });
        break;
      case "json":
        checks.push({ type: "json", ...named });
        break;
      case "json_schema": {
        if (form.schema.trim() === "") {
          checks.push({ type: "json_schema", ...named });
          break;
        }
        const schema = objectOf(form.schema);
        if (typeof schema === "string") at("schema", schema);
        else checks.push({ type: "json_schema", ...named, schema });
        break;
      }
      case "tool_call": {
        const args = form.arguments.trim() === "" ? undefined : objectOf(form.arguments);
        if (typeof args === "string") at("arguments", args);
        else
          checks.push({
            type: "tool_call",
            ...named,
            function: form.function.trim(),
            ...(args ? { arguments: args } : {}),
          });
        break;
      }
      case "max_chars": {
        const value = Number(form.value.trim());
        if (form.value.trim() !== "" && (!Number.isInteger(value) || value < 0))
          at("value", "must be a whole number from 0");
        else checks.push({ type: "max_chars", ...named, value });
        break;
      }
      case "judge": {
        const score = form.pass_score.trim();
        const passScore = Number(score);
        if (score !== "" && (!Number.isFinite(passScore) || passScore < 0 || passScore > 1)) {
          at("pass_score", "must be a number from 0 to 1");
          break;
        }
        checks.push({
          type: "judge",
          ...named,
          prompt: form.prompt.trim(),
          ...(form.version.trim() ? { version: form.version.trim() } : {}),
          ...(score !== "" ? { pass_score: passScore } : {}),
        });
        break;
      }
      case "webhook":
        checks.push({ type: "webhook", ...named, endpoint: form.endpoint });
        break;
    }
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, checks };
}

/** The name a check answers by in results: its own, else its type (`<type>#2` for the second of a type). */
export function checkNames(checks: readonly { type: string; name?: string | undefined }[]): string[] {
  const seen = new Map<string, number>();
  return checks.map((c) => {
    if (c.name !== undefined && c.name !== "") return c.name;
    const n = (seen.get(c.type) ?? 0) + 1;
    seen.set(c.type, n);
    return n === 1 ? c.type : `${c.type}#${n}`;
  });
}

/** Whether two check sets say the same (field order aside): the defaults' badge compares with it. */
export function sameChecks(a: readonly Check[], b: readonly Check[]): boolean {
  const canonical = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (value !== null && typeof value === "object") {
      return `{${Object.keys(value)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
        .join(",")}}`;
    }
    return JSON.stringify(value);
  };
  return canonical(a) === canonical(b);
}
