/**
 * The `webhook` check (docs/evaluations.md "Checks"): a signed POST to one of the project's webhook endpoints,
 * sent by the webhook sender (its address policy, its signing, no redirects, a time limit), whose answer is
 * the verdict, read whole up to ANSWER_BYTES.
 */
import { randomBytes } from "node:crypto";
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { quote, type Verdict } from "@promptstore/core/evaluations/verdicts";
import type { AssistantMessage } from "@promptstore/core/playground";
import { z } from "zod";

/** The most of a receiver's answer read; a longer one is the check's error. */
export const ANSWER_BYTES = 64 * 1024;
const REASON_LENGTH = 1000;

/** What a webhook check's request carries, in Standard Webhooks' `{ type, timestamp, data }`. */
export interface CheckPayload {
  type: "evaluation.check";
  timestamp: string;
  data: {
    project_id: string;
    /** The check's name in its set (`webhook`, `webhook#2`, or its own). */
    check: string;
    /** The evaluated prompt, when the caller said. */
    prompt_id?: string;
    /** The evaluated version's hash. */
    version: string;
    /** The evaluation, when the caller said. */
    evaluation_id?: string;
    case: { id: string } & NormalCase;
    answer: { content: string | null; tool_calls?: AssistantMessage["tool_calls"] };
  };
}

export function checkPayload(input: {
  projectId: string;
  check: string;
  promptId?: string | undefined;
  version: string;
  evaluationId?: string | undefined;
  caseId: string;
  testCase: NormalCase;
  answer: AssistantMessage;
}): CheckPayload {
  return {
    type: "evaluation.check",
    timestamp: new Date().toISOString(),
    data: {
      project_id: input.projectId,
      check: input.check,
      ...(input.promptId !== undefined ? { prompt_id: input.promptId } : {}),
      version: input.version,
      ...(input.evaluationId !== undefined ? { evaluation_id: input.evaluationId } : {}),
      case: { id: input.caseId, ...input.testCase },
      answer: {
        content: input.answer.content,
        ...(input.answer.tool_calls !== undefined && input.answer.tool_calls.length > 0
          ? { tool_calls: input.answer.tool_calls }
          : {}),
      },
    },
  };
}

/** Each request's `webhook-id`: new for every request (a receiver that drops repeats drops none of these). */
export const checkMessageId = (): string => `msg_check_${randomBytes(12).toString("hex")}`;

/** The receiver's answer: other keys are ignored. */
const checkAnswer = z.object(
  {
    pass: z.boolean({ error: "must be true or false" }),
    score: z
      .number({ error: "must be a number from 0 to 1" })
      .min(0, "must be a number from 0 to 1")
      .max(1, "must be a number from 0 to 1")
      .optional(),
    reason: z.string({ error: "must be a string" }).optional(),
  },
  { error: 'must be a JSON object: { "pass": true|false, "score"?: 0 to 1, "reason"?: "…" }' },
);

/** The verdict in a receiver's 2xx answer, or why it is none (`webhook: …`). */
export function webhookVerdict(body: string): Verdict | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { error: `webhook: the answer is not JSON: ${quote(body)}` };
  }
  const result = checkAnswer.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue && issue.path.length > 0 ? `answer.${issue.path.join(".")}` : "answer";
    return { error: `webhook: ${field}: ${issue?.message ?? "is not valid"}` };
  }
  const { pass, score, reason } = result.data;
  const said = reason?.trim() ? reason.trim().slice(0, REASON_LENGTH) : `the endpoint says ${pass ? "pass" : "fail"}`;
  return { pass, score: score ?? (pass ? 1 : 0), reason: said };
}
