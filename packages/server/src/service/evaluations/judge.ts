/**
 * The `judge` check's two ends (docs/evaluations.md "Checks"): the variables a judge prompt is filled with,
 * and the score read from its answer.
 */
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { quote, type Verdict } from "@promptstore/core/evaluations/verdicts";
import type { AssistantMessage } from "@promptstore/core/playground";
import { canonical } from "@promptstore/core/prompts/hash";

/** The names the server fills; a case's variable of the same name is still in `input` and `vars.<name>`. */
export const JUDGE_VARIABLES = ["answer", "tool_calls", "expected", "input"] as const;
const RESERVED = new Set<string>(JUDGE_VARIABLES);

/** The pass score when the check names none. */
export const DEFAULT_PASS_SCORE = 0.5;

/**
 * What a judge prompt's `{{ … }}` are filled with:
 * - `answer`: the answer's text (empty when it has none);
 * - `tool_calls`: its tool calls as JSON (`[]` when none), each `{ id, type, function: { name, arguments } }`;
 * - `expected`: the case's reference answer (empty when it has none);
 * - `input`: the case's `vars` and `messages` as canonical JSON, `{"messages":[…],"vars":{…}}` (no
 *   `messages` when it has none);
 * - `vars.<name>`: each of the case's variables;
 * - `<name>`: each of the case's variables again, unless the name is one of the four above.
 */
export function judgeVariables(answer: AssistantMessage, testCase: NormalCase): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(testCase.vars)) {
    values[`vars.${name}`] = value;
    if (!RESERVED.has(name)) values[name] = value;
  }
  values.answer = answer.content ?? "";
  values.tool_calls = JSON.stringify(answer.tool_calls ?? []);
  values.expected = testCase.expected ?? "";
  values.input = canonical(
    testCase.messages !== undefined ? { messages: testCase.messages, vars: testCase.vars } : { vars: testCase.vars },
  );
  return values;
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** One Markdown code fence around the whole answer (```json … ``` or ``` … ```), which models often add. */
const FENCE = /^```[A-Za-z]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;
const REASON_LENGTH = 1000;

/**
 * The verdict of a judge's answer, or why it is not one (`judge: …`). Accepted, the whole answer (spaces
 * around it aside, optionally in one code fence): a number from 0 to 1, or a JSON object with a number
 * `score` from 0 to 1 and an optional string `reason` (other keys ignored).
 */
export function judgeVerdict(content: string | null, passScore: number): Verdict | { error: string } {
  const said = (content ?? "").trim();
  const body = FENCE.exec(said)?.[1]?.trim() ?? said;
  let score: number | undefined;
  let reason: string | undefined;
  if (NUMBER.test(body)) {
    score = Number(body);
  } else if (body.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      const object = parsed as { score?: unknown; reason?: unknown };
      if (typeof object.score !== "number") {
        return { error: `judge: the answer's "score" is not a number: ${quote(JSON.stringify(object.score) ?? "")}` };
      }
      if (object.reason !== undefined && typeof object.reason !== "string") {
        return { error: `judge: the answer's "reason" is not a string` };
      }
      score = object.score;
      reason = object.reason;
    }
  }
  if (score === undefined) {
    return {
      error: `judge: the answer is not a score: ${quote(said)}; a judge answers a number from 0 to 1, or {"score": <0 to 1>, "reason": "…"}`,
    };
  }
  if (!Number.isFinite(score) || score < 0 || score > 1) {
    return { error: `judge: score ${score} is not from 0 to 1` };
  }
  const why = reason?.trim() ? `: ${reason.trim().slice(0, REASON_LENGTH)}` : "";
  return { pass: score >= passScore, score, reason: `score ${score} (passes at ${passScore})${why}` };
}
