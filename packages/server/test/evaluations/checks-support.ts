/** A CheckRunner over a test app's real services, and the cells it is given. */
import { caseId, caseJson, type NormalCase } from "@promptstore/core/evaluations/cases";
import type { AssistantMessage } from "@promptstore/core/playground";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { type CellInput, CheckRunner, type CheckRunnerDeps } from "../../src/service/evaluations/check-runner.js";
import { RunService } from "../../src/service/playground/run-service.js";
import { WebhookSecrets } from "../../src/service/webhooks/webhook-secrets.js";
import { WebhookStore } from "../../src/store/webhooks.js";
import type { TestApp } from "../support/app.js";

export interface RunnerOptions {
  webhookTimeoutMs?: number;
  webhookAllowPrivate?: boolean;
  modelTimeoutMs?: number;
  validators?: CheckRunnerDeps["validators"];
}

/** The runner as the server builds it, on the app's prompts, connections and webhook endpoints. */
export function checkRunner(t: TestApp, options: RunnerOptions = {}): CheckRunner {
  const runs = new RunService(t.app.prompts, t.app.connections, {
    guardText: DEFAULT_GUARD_TEXT,
    allowPrivate: true,
    timeoutMs: options.modelTimeoutMs ?? 5000,
    totalTimeoutMs: 10_000,
    maxAnswerBytes: 1024 * 1024,
  });
  return new CheckRunner({
    runs,
    prompts: t.app.prompts,
    webhooks: {
      endpoints: new WebhookStore(t.store.db),
      secrets: new WebhookSecrets(t.app.secrets),
      timeoutMs: options.webhookTimeoutMs ?? 5000,
      allowPrivate: options.webhookAllowPrivate ?? true,
    },
    ...(options.validators ? { validators: options.validators } : {}),
  });
}

export const says = (content: string | null, toolCalls?: AssistantMessage["tool_calls"]): AssistantMessage => ({
  role: "assistant",
  content,
  ...(toolCalls ? { tool_calls: toolCalls } : {}),
});

export const VERSION = "a".repeat(64);

/** One cell: the answer, its case (vars `{}` unless given) and a live signal. */
export function cell(answer: AssistantMessage, testCase: Partial<NormalCase> = {}, extra: Partial<CellInput> = {}) {
  const normal: NormalCase = { vars: {}, ...testCase };
  const input: CellInput = {
    answer,
    case: normal,
    caseId: caseId(caseJson(normal)),
    version: VERSION,
    signal: new AbortController().signal,
    ...extra,
  };
  return input;
}

/** What a refused prepare threw: its status and message. */
export async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { status: (error as { status: number }).status, message: (error as Error).message };
  }
  throw new Error("expected a refusal");
}
