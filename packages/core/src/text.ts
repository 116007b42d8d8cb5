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
