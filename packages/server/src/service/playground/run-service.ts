import { randomBytes } from "node:crypto";
import { badRequest } from "@promptstore/core/errors";
import type { ChatMessage, RunBody, RunSettings } from "@promptstore/core/playground";
import { withGuard } from "@promptstore/core/prompts/assemble";
import type { Tool } from "@promptstore/core/prompts/content";
import { fillVariables } from "@promptstore/core/prompts/variables";
import { type ModelOverride, type ModelSettings, mergeSettings, settingsHash } from "@promptstore/core/run-settings";
import type { VersionDocument } from "../../store/prompts/prompt-rows.js";
import { type Caller, requireAccess } from "../access.js";
import type { PromptRead, PromptService } from "../prompts/prompt-service.js";
import type { ConnectionService, OpenConnection } from "./connection-service.js";
import { callModel, type ModelAnswer, type Piece, ProviderError, RunStopped } from "./model-call.js";

/** Where a run's events go: each `send` resolves when the event may be followed by the next (back-pressure). */
export interface RunSink {
  send(event: string, data: unknown): Promise<void>;
}

export interface RunServiceOptions {
  guardText: string;
  allowPrivate: boolean;
  timeoutMs: number;
  totalTimeoutMs: number;
  maxAnswerBytes: number;
}

export type RunOutcome = "ok" | "error" | "stopped";

/** What the metrics are told of each run. */
export interface RunMeter {
  ran(outcome: RunOutcome, ttftMs: number | null): void;
}

/** What runs: a version (or draft) of a prompt, as the model will get it, before variables are filled. */
export interface RunTarget {
  version: string;
  draft: boolean;
  /** The assembled text, guard on or off as asked; variables not yet filled. */
  system: string;
  tools: Tool[];
  /** The version's (or draft's) own model settings. */
  settings: Partial<ModelSettings> | undefined;
}

/**
 * The model settings a version carries. The model-settings work (branch i21a) stores them with the version;
 * until it is merged no version has any, and this one function is what changes when it is.
 */
function versionSettings(read: PromptRead): Partial<ModelSettings> | undefined {
  const document: VersionDocument = read.document;
  return document.modelJson ? (JSON.parse(document.modelJson) as Partial<ModelSettings>) : undefined;
}

/** Keys the server owns in the request to the provider: `extra` may not replace them. */
const OWNED = new Set(["model", "messages", "tools", "stream", "stream_options"]);

/** The chat-completions body of a run. */
export function providerBody(
  model: Partial<ModelSettings>,
  system: string,
  messages: ChatMessage[],
  tools: Tool[],
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(model.extra ?? {})) if (!OWNED.has(key)) body[key] = value;
  body.model = model.name;
  body.messages = [{ role: "system", content: system }, ...messages];
  if (tools.length > 0) body.tools = tools;
  if (model.temperature !== undefined) body.temperature = model.temperature;
  if (model.top_p !== undefined) body.top_p = model.top_p;
  if (model.max_output_tokens !== undefined) body.max_tokens = model.max_output_tokens;
  if (model.stop !== undefined) body.stop = model.stop;
  if (model.response_format !== undefined) body.response_format = model.response_format;
  return body;
}

/** A run ready to go: the checks passed, the connection opened. */
export interface PreparedRun {
  runId: string;
  target: RunTarget;
  connection: OpenConnection;
  settings: RunSettings;
  settingsHash: string;
  variables: Record<string, string>;
  messages: ChatMessage[];
}

/**
 * Runs a prompt against a model connection (docs/playground.md). Every check (scope, body, version,
 * connection, model name, address) is made before anything is streamed, so a refusal is an ordinary error
 * answer; what the provider does after is told as events.
 */
export class RunService {
  constructor(
    private readonly prompts: PromptService,
    readonly connections: ConnectionService,
    private readonly options: RunServiceOptions,
    private readonly meter: RunMeter = { ran() {} },
  ) {}

  /** A version (any reference a read takes) or a draft, as a run sends it. */
  async target(
    caller: Caller,
    promptId: string,
    what: { version?: string | undefined; draft?: RunBody["draft"] },
    guard: boolean,
  ): Promise<RunTarget> {
    if (what.draft !== undefined) {
      // The prompt must exist, and be the caller's project's, even for a draft.
      await this.prompts.listVersions(caller, promptId);
      // A draft's settings hash with it (as saving it would) only when whole: a name is what makes them settings.
      const { model: draftModel, ...written } = what.draft;
      // Its includes expanded as a save now would pin them (docs/includes.md).
      const draft = await this.prompts.draftVersion(
        caller,
        promptId,
        draftModel?.name !== undefined ? { ...written, model: draftModel as ModelSettings } : written,
      );
      return {
        version: draft.hash,
        draft: true,
        system: guard ? withGuard(draft.text, this.options.guardText) : draft.text,
        tools: draft.tools,
        settings: what.draft.model,
      };
    }
    const read = await this.prompts.readDocument(caller, promptId, { version: what.version ?? "production", guard });
    return {
      version: read.hash,
      draft: false,
      system: JSON.parse(read.textJson) as string,
      tools: JSON.parse(read.document.toolsJson) as Tool[],
      settings: versionSettings(read),
    };
  }

  /**
   * The effective settings of a target under the run's overrides. Without a model name from either, the
   * connection's first listed model; a connection that lists none makes that a 400.
   */
  settingsFor(target: RunTarget, connection: OpenConnection, guard: boolean, override: ModelOverride | undefined) {
    const merged = mergeSettings(target.settings, override);
    const name = merged.name ?? connection.models[0];
    if (name === undefined) {
      throw badRequest(
        "model.name: required: the version has no model settings and the connection lists no models; name a model for this run",
      );
    }
    const model = { ...merged, name };
    const settings: RunSettings = { connection: connection.id, guard, model };
    return { settings, hash: settingsHash(settings) };
  }

  async prepare(caller: Caller, promptId: string, body: RunBody): Promise<PreparedRun> {
    requireAccess(caller, "write", "running a prompt");
    const guard = body.guard ?? true;
    // The version and the connection are looked up at once: both are on the run's path to its first token.
    const [target, connection] = await Promise.all([
      this.target(caller, promptId, body, guard),
      this.connections.open(caller.projectId, body.connection),
    ]);
    const { settings, hash } = this.settingsFor(target, connection, guard, body.model);
    return {
      runId: `run_${randomBytes(8).toString("hex")}`,
      target,
      connection,
      settings,
      settingsHash: hash,
      variables: body.variables ?? {},
      messages: body.messages ?? [],
    };
  }

  /** The `start` event of a prepared run. */
  startEvent(run: PreparedRun) {
    return {
      run_id: run.runId,
      version: run.target.version,
      draft: run.target.draft,
      model: run.settings.model,
      settings_hash: run.settingsHash,
      connection: run.connection.id,
    };
  }

  /**
   * Calls the model. With a sink, each piece is sent as it comes; resolves with the answer, or rejects with
   * a ProviderError or RunStopped. Metered either way.
   */
  async call(
    run: PreparedRun,
    signal: AbortSignal,
    onPiece: (piece: Piece) => void | Promise<void>,
    meter: RunMeter = this.meter,
  ): Promise<ModelAnswer> {
    const system = fillVariables(run.target.system, run.variables);
    try {
      const answer = await callModel(
        {
          baseUrl: run.connection.baseUrl,
          apiKey: run.connection.apiKey,
          body: providerBody(run.settings.model, system, run.messages, run.target.tools),
        },
        {
          allowPrivate: this.options.allowPrivate,
          timeoutMs: this.options.timeoutMs,
          totalTimeoutMs: this.options.totalTimeoutMs,
          maxAnswerBytes: this.options.maxAnswerBytes,
          signal,
        },
        onPiece,
      );
      meter.ran("ok", answer.ttftMs);
      return answer;
    } catch (error) {
      meter.ran(error instanceof RunStopped ? "stopped" : "error", null);
      throw error;
    }
  }

  /** One run, streamed to the sink: start, deltas and tool-call pieces, then done or error. */
  async stream(run: PreparedRun, sink: RunSink, signal: AbortSignal): Promise<void> {
    await sink.send("start", this.startEvent(run));
    try {
      const answer = await this.call(run, signal, (piece) =>
        piece.kind === "content"
          ? sink.send("delta", { content: piece.content })
          : sink.send("tool_call", {
              index: piece.index,
              ...(piece.id !== undefined ? { id: piece.id } : {}),
              ...(piece.name !== undefined ? { name: piece.name } : {}),
              arguments: piece.arguments,
            }),
      );
      await sink.send("done", {
        message: answer.message,
        finish_reason: answer.finishReason,
        usage: answer.usage,
        timing: { ttft_ms: answer.ttftMs, total_ms: answer.totalMs },
      });
    } catch (error) {
      if (error instanceof RunStopped) return;
      if (error instanceof ProviderError) {
        await sink.send("error", { code: error.code, message: error.message, status: error.status });
        return;
      }
      throw error;
    }
  }
}
