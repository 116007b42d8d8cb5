/**
 * The checks the server decides (issue 38, docs/evaluations.md "Checks"): `json_schema` (a schema validator
 * safe for a user's schema), `judge` (a prompt of the store, run through the playground's model-call path)
 * and `webhook` (a signed POST to one of the project's webhook endpoints). The other checks are core's
 * `localVerdict`; a check set runs here whole, one outcome per check, in order.
 *
 * `prepare` refuses, before anything is sent, what only the store can tell (a judge prompt or version that
 * does not resolve, a webhook endpoint that is not the project's, a schema that does not compile), and pins
 * what a check names by reference: a judge to its version's hash and the model it runs on, a webhook to its
 * endpoint's URL. The pinned set is content: its hash is part of an evaluation's identity.
 */
import { randomBytes } from "node:crypto";
import { AppError, badRequest } from "@promptstore/core/errors";
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { type Check, checkNames } from "@promptstore/core/evaluations/checks";
import { localVerdict, type Verdict } from "@promptstore/core/evaluations/verdicts";
import type { AssistantMessage } from "@promptstore/core/playground";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import type { ValidateFunction } from "ajv";
import { SecretUnreadable } from "../../secrets/secret-box.js";
import type { WebhookStore } from "../../store/webhooks.js";
import { type Caller, requireAccess } from "../access.js";
import type { OpenConnection } from "../playground/connection-service.js";
import { type ModelAnswer, ProviderError, RunStopped } from "../playground/model-call.js";
import type { PreparedRun, RunService } from "../playground/run-service.js";
import type { PromptService } from "../prompts/prompt-service.js";
import type { Resolver } from "../webhook-address.js";
import { unreadableReason, type WebhookSecrets } from "../webhooks/webhook-secrets.js";
import { sendWebhook } from "../webhooks/webhook-sender.js";
import { responseFormatSchema, SchemaValidators, schemaVerdict } from "./json-schema.js";
import { DEFAULT_PASS_SCORE, judgeVariables, judgeVerdict } from "./judge.js";
import { ANSWER_BYTES, checkMessageId, checkPayload, webhookVerdict } from "./webhook-check.js";

type JudgeCheck = Extract<Check, { type: "judge" }>;
type WebhookCheck = Extract<Check, { type: "webhook" }>;

/** A judge pinned: `version` is the judge prompt's full hash; `model` the model name it runs on. */
export type PinnedJudge = JudgeCheck & { version: string; model: string };
/** A webhook pinned: `url` is the endpoint's URL when the set was prepared. */
export type PinnedWebhook = WebhookCheck & { url: string };
export type PinnedCheck = Exclude<Check, JudgeCheck | WebhookCheck> | PinnedJudge | PinnedWebhook;

/** What a judge needs at each call, made once by `prepare`. */
interface JudgeRuntime {
  /** The run without its variables: target (text, tools, settings), connection, effective settings. */
  run: Omit<PreparedRun, "variables" | "runId">;
}

/** The runner's own, for `run`: never stored nor answered (it holds the connection's key). */
export interface PreparedRuntime {
  /** By check index: the compiled schema of a `json_schema` check that gives one. */
  schemas: (ValidateFunction | undefined)[];
  /** By check index: a judge's run. */
  judges: (JudgeRuntime | undefined)[];
}

export interface PreparedChecks {
  /**
   * The check set as given, with every judge pinned (`version` replaced by the judge prompt's resolved hash,
   * `model` added: the model it runs on) and every webhook pinned (the endpoint's `url` added).
   */
  checks: PinnedCheck[];
  /** checkNames(checks) */
  names: string[];
  /** SHA-256 hex of canonical(pinned checks). */
  hash: string;
  /** The project the checks' prompts and endpoints are of. */
  projectId: string;
  /**
   * What `run` needs besides the content (compiled schemas, the judges' runs with the connection's key).
   * Not enumerable: it is never serialized, and a copy made by spreading has none (pass the object itself).
   */
  readonly runtime: PreparedRuntime;
}

export interface CellInput {
  answer: AssistantMessage;
  case: NormalCase;
  caseId: string;
  /** The evaluated version's hash. */
  version: string;
  /** The evaluated version's effective response_format (for json_schema without its own schema), if any. */
  responseFormat?: unknown;
  /** The evaluated prompt and the evaluation: told to webhook checks when given. */
  promptId?: string | undefined;
  evaluationId?: string | undefined;
  signal: AbortSignal;
}

/** A verdict, or why the check could not decide (never a silent pass). */
export type CheckOutcome = Verdict | { error: string };

export interface WebhookCheckOptions {
  endpoints: WebhookStore;
  secrets: WebhookSecrets;
  /** PROMPTSTORE_WEBHOOK_TIMEOUT_MS: one request, connection to the end of the answer. */
  timeoutMs: number;
  /** PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  resolver?: Resolver;
  /** The most of an answer read (ANSWER_BYTES, 64 KiB, when absent). */
  answerBytes?: number;
}

export interface CheckRunnerDeps {
  runs: RunService;
  prompts: PromptService;
  webhooks: WebhookCheckOptions;
  /**
   * How a judge's model call is made; `runs.call` when absent. The evaluation runner passes its own (the
   * same one its cells use: a 429 waited out) so that a judge obeys the provider's limits as a cell does.
   */
  modelCall?: (run: PreparedRun, signal: AbortSignal) => Promise<ModelAnswer>;
  /** Compiled schemas, shared by the instance's runners (a new cache when absent). */
  validators?: SchemaValidators;
}

/** The guard is on for judges, as for runs by default: the answer a judge reads is not its instructions. */
const JUDGE_GUARD = true;

const field = (index: number, name: string) => `checks[${index}].${name}`;

export class CheckRunner {
  private readonly validators: SchemaValidators;
  private readonly modelCall: (run: PreparedRun, signal: AbortSignal) => Promise<ModelAnswer>;

  constructor(private readonly deps: CheckRunnerDeps) {
    this.validators = deps.validators ?? new SchemaValidators();
    this.modelCall = deps.modelCall ?? ((run, signal) => deps.runs.call(run, signal, () => {}));
  }

  /**
   * Validates what needs the store, pins and hashes. Refusals are 400s naming the field
   * (`checks[2].prompt: no prompt "x" in this project`). Judges run on `judgeConnection` (the evaluation's).
   */
  async prepare(caller: Caller, checks: Check[], judgeConnection: OpenConnection): Promise<PreparedChecks> {
    requireAccess(caller, "read", "reading a judge prompt");
    const runtime: PreparedRuntime = { schemas: [], judges: [] };
    const pinned: PinnedCheck[] = [];
    for (const [index, check] of checks.entries()) {
      switch (check.type) {
        case "json_schema": {
          if (check.schema !== undefined) {
            const compiled = this.validators.compile(check.schema);
            if ("error" in compiled) throw badRequest(`${field(index, "schema")}: ${compiled.error}`);
            runtime.schemas[index] = compiled.validate;
          }
          pinned.push(check);
          break;
        }
        case "judge": {
          const { check: judge, run } = await this.prepareJudge(caller, index, check, judgeConnection);
          runtime.judges[index] = { run };
          pinned.push(judge);
          break;
        }
        case "webhook":
          pinned.push(await this.prepareWebhook(caller.projectId, index, check));
          break;
        default:
          pinned.push(check);
      }
    }
    const prepared = {
      checks: pinned,
      names: checkNames(pinned),
      hash: sha256Hex(canonical(pinned)),
      projectId: caller.projectId,
    };
    // Not enumerable: JSON.stringify (a log line, a stored row) never carries the connection's key.
    return Object.defineProperty(prepared, "runtime", { value: runtime, enumerable: false }) as PreparedChecks;
  }

  private async prepareJudge(caller: Caller, index: number, check: JudgeCheck, connection: OpenConnection) {
    const ref = check.version ?? "production";
    let hash: string;
    try {
      const resolved = await this.deps.prompts.resolveRead(caller, check.prompt, { version: ref, guard: JUDGE_GUARD });
      // A label in a rollout: the judge is the label's own version, never the candidate (chosen at random).
      hash = (resolved.kind === "single" ? resolved.read : resolved.arms.current).hash;
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== "not_found" && error.code !== "bad_request")) throw error;
      if (error.message === `prompt ${check.prompt} not found`) {
        throw badRequest(`${field(index, "prompt")}: no prompt ${JSON.stringify(check.prompt)} in this project`);
      }
      throw badRequest(
        `${field(index, "version")}: ${JSON.stringify(ref)} does not resolve in prompt ${check.prompt}: ${error.message.replace(/^version: /, "")}`,
      );
    }
    const target = await this.deps.runs.target(caller, check.prompt, { version: hash }, JUDGE_GUARD);
    let effective: ReturnType<RunService["settingsFor"]>;
    try {
      effective = this.deps.runs.settingsFor(target, connection, JUDGE_GUARD, undefined);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== "bad_request") throw error;
      throw badRequest(
        `${field(index, "prompt")}: the judge's version ${hash.slice(0, 12)} names no model and the connection lists none; give the judge prompt model settings`,
      );
    }
    const pinned: PinnedJudge = { ...check, version: target.version, model: effective.settings.model.name as string };
    const run: JudgeRuntime["run"] = {
      target,
      connection,
      settings: effective.settings,
      settingsHash: effective.hash,
      messages: [],
    };
    return { check: pinned, run };
  }

  private async prepareWebhook(projectId: string, index: number, check: WebhookCheck): Promise<PinnedWebhook> {
    const { endpoints, secrets } = this.deps.webhooks;
    const row = await endpoints.findEndpoint(projectId, check.endpoint);
    const at = field(index, "endpoint");
    if (!row) throw badRequest(`${at}: no webhook endpoint ${check.endpoint} in this project`);
    if (row.enabled !== 1) throw badRequest(`${at}: webhook endpoint ${check.endpoint} is disabled; enable it first`);
    const problem = secrets.problem(row.id, row.secret);
    if (problem !== null) throw badRequest(`${at}: webhook endpoint ${check.endpoint} cannot sign: ${problem}`);
    return { ...check, url: row.url };
  }

  /**
   * One outcome per check, in order. A check's own failure is its `{ error }`; only a stopped cell (the
   * signal aborted) rejects, with RunStopped.
   */
  async run(prepared: PreparedChecks, input: CellInput): Promise<CheckOutcome[]> {
    const outcomes = await Promise.all(
      prepared.checks.map(async (check, index): Promise<CheckOutcome> => {
        try {
          return await this.decide(prepared, index, check, input);
        } catch (error) {
          if (error instanceof RunStopped || input.signal.aborted) throw new RunStopped("stopped");
          return { error: `${check.type}: ${(error as Error).message}`.slice(0, 1000) };
        }
      }),
    );
    if (input.signal.aborted) throw new RunStopped("stopped");
    return outcomes;
  }

  private async decide(
    prepared: PreparedChecks,
    index: number,
    check: PinnedCheck,
    input: CellInput,
  ): Promise<CheckOutcome> {
    const local = localVerdict(check, { answer: input.answer, expected: input.case.expected });
    if (local !== undefined) return local;
    switch (check.type) {
      case "json_schema":
        return this.jsonSchema(prepared.runtime.schemas[index], input);
      case "judge":
        return this.judge(prepared.runtime.judges[index], check as PinnedJudge, input);
      case "webhook":
        return this.webhook(prepared, index, check as PinnedWebhook, input);
      default:
        return { error: `${check.type}: not a check this server decides` };
    }
  }

  private jsonSchema(own: ValidateFunction | undefined, input: CellInput): CheckOutcome {
    let validate = own;
    if (validate === undefined) {
      const schema = responseFormatSchema(input.responseFormat);
      if (schema === undefined) {
        return {
          error:
            'json_schema: no schema: the check gives none and the version\'s response_format is not { "type": "json_schema", "json_schema": { "schema": … } }',
        };
      }
      const compiled = this.validators.compile(schema);
      if ("error" in compiled) return { error: `json_schema: the version's response_format schema ${compiled.error}` };
      validate = compiled.validate;
    }
    return schemaVerdict(validate, input.answer.content ?? "");
  }

  private async judge(judge: JudgeRuntime | undefined, check: PinnedJudge, input: CellInput): Promise<CheckOutcome> {
    if (judge === undefined) return { error: "judge: not prepared (run takes the object prepare answered)" };
    const run: PreparedRun = {
      ...judge.run,
      runId: `run_${randomBytes(8).toString("hex")}`,
      variables: judgeVariables(input.answer, input.case),
    };
    let answer: ModelAnswer;
    try {
      answer = await this.modelCall(run, input.signal);
    } catch (error) {
      if (error instanceof ProviderError) return { error: `judge: ${error.message}` };
      throw error;
    }
    return judgeVerdict(answer.message.content, check.pass_score ?? DEFAULT_PASS_SCORE);
  }

  private async webhook(
    prepared: PreparedChecks,
    index: number,
    check: PinnedWebhook,
    input: CellInput,
  ): Promise<CheckOutcome> {
    const options = this.deps.webhooks;
    const row = await options.endpoints.findEndpoint(prepared.projectId, check.endpoint);
    if (!row) return { error: `webhook: endpoint ${check.endpoint} was removed` };
    if (row.enabled !== 1) return { error: `webhook: endpoint ${check.endpoint} is disabled` };
    if (row.url !== check.url) {
      return { error: `webhook: endpoint ${check.endpoint}'s URL changed after the evaluation started` };
    }
    let secret: string;
    try {
      secret = options.secrets.open(row.id, row.secret);
    } catch (error) {
      if (error instanceof SecretUnreadable) {
        return { error: `webhook: endpoint ${check.endpoint} cannot sign: ${unreadableReason(error)}` };
      }
      throw error;
    }
    const payload = checkPayload({
      projectId: prepared.projectId,
      check: prepared.names[index] as string,
      promptId: input.promptId,
      version: input.version,
      evaluationId: input.evaluationId,
      caseId: input.caseId,
      testCase: input.case,
      answer: input.answer,
    });
    const attempt = await sendWebhook(
      { url: check.url, secret },
      { id: checkMessageId(), payload: JSON.stringify(payload) },
      {
        timeoutMs: options.timeoutMs,
        allowPrivate: options.allowPrivate,
        signal: input.signal,
        answerBytes: options.answerBytes ?? ANSWER_BYTES,
        ...(options.resolver ? { resolver: options.resolver } : {}),
      },
    );
    if (input.signal.aborted) throw new RunStopped("stopped");
    if (!attempt.ok) return { error: `webhook: ${attempt.error}` };
    return webhookVerdict(attempt.body ?? "");
  }
}
