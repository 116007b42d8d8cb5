/**
 * What every input schema builds its text on: strings that are well-formed Unicode, and free-form JSON values
 * bounded in depth and size. Shared by the REST and dashboard schemas (and so by MCP, which reuses them).
 */
import { z } from "zod";

export const NOT_WELL_FORMED = "is not well-formed Unicode (lone surrogate)";
export const HAS_NUL = "contains U+0000 (NUL), which cannot be stored";

const LONE_SURROGATE = /\p{Cs}/u;
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/**
 * Whether a string has no lone surrogate. Such a string cannot be stored as sent (the databases keep UTF-8
 * and put U+FFFD in its place), so its hash would name text the service never serves.
 * `String.prototype.isWellFormed` where it exists (Node 20, current browsers), a regular expression elsewhere.
 */
export const isWellFormed: (value: string) => boolean = nativeIsWellFormed
  ? (value) => nativeIsWellFormed.call(value)
  : (value) => !LONE_SURROGATE.test(value);

/**
 * Whether a string is free of U+0000. PostgreSQL's text cannot hold it (the insert fails), while SQLite
 * stores it: accepted on one database and a 500 on the other, and a store that could not be moved between
 * them. Refused everywhere instead (found by test/resilience/fuzz-properties.test.ts).
 */
export const hasNoNul = (value: string): boolean => !value.includes("\u0000");

/**
 * `z.string()` for every string the service accepts: refuses text that is not well-formed Unicode or holds a
 * NUL, before any other rule of the field. Input schemas use this, never `z.string()` directly (a test holds
 * them to it).
 */
export function text(params?: Parameters<typeof z.string>[0]) {
  return z
    .string(params)
    .refine(isWellFormed, { message: NOT_WELL_FORMED, abort: true })
    .refine(hasNoNul, { message: HAS_NUL, abort: true });
}

const A_TYPE: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  tuple: "an array",
  null: "null",
  date: "a date",
};

function typeOf(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "an array";
  if (typeof input === "number" && Number.isNaN(input)) return "NaN";
  return A_TYPE[typeof input] ?? typeof input;
}

const UNITS: Record<string, string> = { string: "characters", array: "items", set: "items", map: "entries" };
const FORMATS: Record<string, string> = { url: "a URL", email: "an e-mail address", datetime: "an ISO 8601 timestamp" };

/**
 * The words for a problem a schema gave none of its own: "required" for a missing field, "must be a string, not
 * a number" for a wrong type, and the like, instead of zod's "Invalid input: expected string, received
 * undefined". Installed once for every zod schema of the process (below), so REST, MCP (the SDK's own schemas
 * included) and the dashboard API say the same; a schema's own message still comes first.
 */
export function plainIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined) return "required";
      const expected = A_TYPE[issue.expected] ?? issue.expected;
      if (issue.expected === "int" && typeof issue.input === "number") return `must be ${expected}`;
      return `must be ${expected}, not ${typeOf(issue.input)}`;
    }
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = String(small ? issue.minimum : issue.maximum);
      const units = UNITS[issue.origin];
      const unit = units && bound === "1" ? units.replace(/(ies|s)$/, (end) => (end === "ies" ? "y" : "")) : units;
      if (issue.exact) return unit ? `must have exactly ${bound} ${unit}` : `must be exactly ${bound}`;
      if (unit) return `must have at ${small ? "least" : "most"} ${bound} ${unit}`;
      if (issue.inclusive === false) return `must be ${small ? "more" : "less"} than ${bound}`;
      return `must be at ${small ? "least" : "most"} ${bound}`;
    }
    case "invalid_format":
      return issue.format === "regex"
        ? "is not in the expected form"
        : `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "invalid_union":
    case "custom":
      return "is not valid";
    default:
      return undefined;
  }
}

z.config({ customError: plainIssueMessage });

export interface JsonBounds {
  /** Levels of objects and arrays, the value itself being level 1. */
  maxDepth: number;
  /** Characters of the value serialized as JSON. */
  maxLength: number;
}

export interface JsonProblem {
  /** Where, relative to the value. */
  path: (string | number)[];
  message: string;
}

interface Frame {
  value: unknown;
  depth: number;
  key: string | number | undefined;
  parent: Frame | undefined;
}

function pathOf(frame: Frame): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) path.push(f.key as string | number);
  return path.reverse();
}

/**
 * The first problem of a free-form JSON value (as parsed from a request), or undefined: nested deeper than
 * allowed, a string or key that is not well-formed Unicode, or longer than allowed as JSON. Walks with an
 * explicit stack and stops at the first level too deep, so no depth of input can overflow the call stack
 * here; once it passes, recursive consumers (canonical JSON for the hash, JSON.stringify) are safe.
 */
export function jsonValueProblem(value: unknown, bounds: JsonBounds): JsonProblem | undefined {
  const stack: Frame[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const current = frame.value;
    if (typeof current === "string") {
      if (!isWellFormed(current)) return { path: pathOf(frame), message: NOT_WELL_FORMED };
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    if (frame.depth > bounds.maxDepth) {
      return { path: [], message: `nested deeper than ${bounds.maxDepth} levels` };
    }
    const depth = frame.depth + 1;
    // Pushed in reverse, so the walk (and the problem reported) follows the document's order.
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], depth, key: i, parent: frame });
    } else {
      const keys = Object.keys(current);
      for (const key of keys) {
        if (!isWellFormed(key)) return { path: pathOf(frame), message: `has a key that ${NOT_WELL_FORMED}` };
      }
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ value: (current as Record<string, unknown>)[key], depth, key, parent: frame });
      }
    }
  }
  if (JSON.stringify(value).length > bounds.maxLength) {
    return { path: [], message: `must be at most ${bounds.maxLength} characters as JSON` };
  }
  return undefined;
}
