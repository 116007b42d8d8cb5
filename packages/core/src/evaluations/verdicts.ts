/**
 * The verdict of a check that needs nothing but the answer (and the case's `expected`): pass, a score from 0
 * to 1 (1 or 0 for these), and a reason a person reads in the results table. `json_schema`, `judge` and
 * `webhook` are the server's (a schema validator, a model, a URL). Reasons quote at most 80 characters of
 * either side.
 */
import type { AssistantMessage } from "../playground.js";
import { type Check, compilePattern } from "./checks.js";

export interface Verdict {
  pass: boolean;
  score: number;
  reason: string;
}

/** What a check looks at: the model's answer, and the case's reference answer when it has one. */
export interface CheckInput {
  answer: AssistantMessage;
  expected?: string | undefined;
}

const QUOTE = 80;
export function quote(text: string): string {
  const json = JSON.stringify(text.length > QUOTE ? `${text.slice(0, QUOTE)}…` : text);
  return json;
}

const verdict = (pass: boolean, reason: string): Verdict => ({ pass, score: pass ? 1 : 0, reason });

function fold(text: string, options: { trim?: boolean | undefined; case_insensitive?: boolean | undefined }) {
  const trimmed = options.trim ? text.trim() : text;
  return options.case_insensitive ? trimmed.toLowerCase() : trimmed;
}

function compare(
  answer: string,
  wanted: string,
  options: { trim?: boolean | undefined; case_insensitive?: boolean | undefined },
): Verdict {
  const a = fold(answer, options);
  const b = fold(wanted, options);
  if (a === b) return verdict(true, "equal");
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  return verdict(false, `differs at character ${at + 1}: expected ${quote(wanted)}, got ${quote(answer)}`);
}

/** Whether `arguments` holds every key of `wanted` with an equal value (objects compared the same way). */
function includes(actual: unknown, wanted: unknown): boolean {
  if (wanted === null || typeof wanted !== "object") return JSON.stringify(actual) === JSON.stringify(wanted);
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((w, i) => includes(actual[i], w));
  }
  if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
  return Object.entries(wanted).every(([k, w]) => Object.hasOwn(actual, k) && includes((actual as any)[k], w));
}

/** The verdict of a check that the answer alone decides, or undefined for the server's kinds. */
export function localVerdict(check: Check, input: CheckInput): Verdict | undefined {
  const content = input.answer.content ?? "";
  switch (check.type) {
    case "equals":
      return compare(content, check.value, check);
    case "expected":
      if (input.expected === undefined) return verdict(false, "the case has no expected answer");
      return compare(content, input.expected, check);
    case "contains":
    case "not_contains": {
      const found = fold(content, check).includes(fold(check.value, check));
      const wanted = check.type === "contains";
      return verdict(found === wanted, `${found ? "contains" : "does not contain"} ${quote(check.value)}`);
    }
    case "regex": {
      const compiled = compilePattern(check.pattern, check.flags);
      if (typeof compiled === "string") return verdict(false, `pattern ${compiled}`);
      const found = compiled.matcher(content).find();
      return verdict(found, `${found ? "matches" : "does not match"} /${check.pattern}/${check.flags ?? ""}`);
    }
    case "json":
      try {
        JSON.parse(content);
        return verdict(true, "parses as JSON");
      } catch (error) {
        return verdict(false, `not JSON: ${(error as Error).message.slice(0, 120)}`);
      }
    case "max_chars": {
      // Characters as a person counts them (code points), not UTF-16 units.
      const length = [...content].length;
      return verdict(length <= check.value, `${length} characters, at most ${check.value}`);
    }
    case "tool_call": {
      const calls = (input.answer.tool_calls ?? []).filter((c) => c.function.name === check.function);
      if (calls.length === 0) {
        const made = (input.answer.tool_calls ?? []).map((c) => c.function.name);
        return verdict(
          false,
          `did not call ${check.function}${made.length > 0 ? ` (called ${made.join(", ")})` : " (no tool call)"}`,
        );
      }
      if (check.arguments === undefined) return verdict(true, `called ${check.function}`);
      for (const call of calls) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(call.function.arguments);
        } catch {
          continue;
        }
        if (includes(parsed, check.arguments)) return verdict(true, `called ${check.function} with the arguments`);
      }
      return verdict(
        false,
        `called ${check.function}, not with ${quote(JSON.stringify(check.arguments))}: ${quote(calls[0]?.function.arguments ?? "")}`,
      );
    }
    default:
      return undefined;
  }
}
