import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import {
  type ChatMessage,
  type CreateExampleBody,
  EXAMPLE_ID,
  type ExampleView,
  type ImportExamplesBody,
  PLAYGROUND_LIMITS,
  type ResultView,
  type RunAllBody,
  type RunSettings,
  type UpdateExampleBody,
} from "@promptstore/core/playground";
import type { ReleaseView } from "@promptstore/core/views";
import { newId, now } from "../../store/ids.js";
import type { ExampleRow, PlaygroundStore, ResultRow } from "../../store/playground.js";
import { type Caller, requireAccess } from "../access.js";
import type { PromptService } from "../prompts/prompt-service.js";
import { ProviderError, RunStopped } from "./model-call.js";
import type { PreparedRun, RunService, RunSink, RunTarget } from "./run-service.js";

function toExampleView(row: ExampleRow): ExampleView {
  return {
    id: row.id,
    prompt_id: row.prompt_id,
    name: row.name,
    variables: JSON.parse(row.variables) as Record<string, string>,
    messages: JSON.parse(row.messages) as ChatMessage[],
    good_answer: row.good_answer,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toResultView(row: ResultRow): ResultView {
  return {
    example_id: row.example_id,
    version: row.version,
    settings_hash: row.settings_hash,
    settings: JSON.parse(row.settings),
    answer: JSON.parse(row.answer),
    finish_reason: row.finish_reason,
    usage: row.usage === null ? null : JSON.parse(row.usage),
    timing: { ttft_ms: row.ttft_ms === null ? null : Number(row.ttft_ms), total_ms: Number(row.total_ms) },
    ran_at: row.ran_at,
    imported: row.imported === 1,
  };
}

const exampleNotFound = (id: string) => notFound(`example ${id.slice(0, 64)} not found`);

/** One example's answers from a release's two sides. */
export interface ReleaseExample {
  example_id: string;
  name: string;
  candidate: ResultView | null;
  production: ResultView | null;
}

/**
 * Saved examples per prompt and the results kept of running them (docs/playground.md). Reads need `read`,
 * every change and every run `write`, on every surface.
 */
export class ExampleService {
  constructor(
    private readonly store: PlaygroundStore,
    private readonly prompts: PromptService,
    private readonly runs: RunService,
  ) {}

  /** The prompt must be the caller's; the history read answers 404 otherwise. */
  private async requirePrompt(caller: Caller, promptId: string): Promise<void> {
    await this.prompts.listVersions(caller, promptId);
  }

  private async requireExample(caller: Caller, promptId: string, id: string): Promise<ExampleRow> {
    const row = EXAMPLE_ID.test(id) ? await this.store.findExample(caller.projectId, promptId, id) : undefined;
    if (!row) throw exampleNotFound(id);
    return row;
  }

  async list(caller: Caller, promptId: string): Promise<{ examples: ExampleView[] }> {
    requireAccess(caller, "read", "reading examples");
    await this.requirePrompt(caller, promptId);
    return { examples: (await this.store.listExamples(caller.projectId, promptId)).map(toExampleView) };
  }

  async get(caller: Caller, promptId: string, id: string): Promise<ExampleView> {
    requireAccess(caller, "read", "reading examples");
    await this.requirePrompt(caller, promptId);
    return toExampleView(await this.requireExample(caller, promptId, id));
  }

  async create(caller: Caller, promptId: string, body: CreateExampleBody): Promise<ExampleView> {
    requireAccess(caller, "write", "saving examples");
    await this.requirePrompt(caller, promptId);
    const at = now();
    const row: ExampleRow = {
      id: newId("exa"),
      project_id: caller.projectId,
      prompt_id: promptId,
      name: body.name,
      variables: JSON.stringify(body.variables ?? {}),
      messages: JSON.stringify(body.messages ?? []),
      good_answer: body.good_answer ?? null,
      created_at: at,
      updated_at: at,
    };
    if (!(await this.store.createExample(row, PLAYGROUND_LIMITS.examplesPerPrompt))) {
      throw new AppError(
        "forbidden",
        `examples: a prompt may have at most ${PLAYGROUND_LIMITS.examplesPerPrompt}; remove one first`,
      );
    }
    return toExampleView(row);
  }

  /** Editing what the example feeds the model (variables, messages) drops its kept results: they answered other inputs. */
  async update(caller: Caller, promptId: string, id: string, body: UpdateExampleBody): Promise<ExampleView> {
    requireAccess(caller, "write", "saving examples");
    await this.requirePrompt(caller, promptId);
    const before = await this.requireExample(caller, promptId, id);
    const patch: Partial<ExampleRow> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.variables !== undefined) patch.variables = JSON.stringify(body.variables);
    if (body.messages !== undefined) patch.messages = JSON.stringify(body.messages);
    if (body.good_answer !== undefined) patch.good_answer = body.good_answer;
    const inputsChanged =
      (patch.variables !== undefined && patch.variables !== before.variables) ||
      (patch.messages !== undefined && patch.messages !== before.messages);
    if (!(await this.store.updateExample(caller.projectId, promptId, id, patch, now(), inputsChanged))) {
      throw exampleNotFound(id);
    }
    return toExampleView(await this.requireExample(caller, promptId, id));
  }

  async remove(caller: Caller, promptId: string, id: string): Promise<{ id: string; removed: true }> {
    requireAccess(caller, "write", "removing examples");
    await this.requirePrompt(caller, promptId);
    if (!EXAMPLE_ID.test(id) || !(await this.store.removeExample(caller.projectId, promptId, id))) {
      throw exampleNotFound(id);
    }
    return { id, removed: true };
  }

  /** Every kept result of one version (any reference a read takes), newest first. */
  async results(caller: Caller, promptId: string, ref: string): Promise<{ version: string; results: ResultView[] }> {
    requireAccess(caller, "read", "reading example results");
    const read = await this.prompts.readDocument(caller, promptId, { version: ref, guard: false });
    const rows = await this.store.resultsOf(caller.projectId, promptId, [read.hash]);
    return { version: read.hash, results: rows.map(toResultView) };
  }

  /** Everything of a prompt's examples, as export carries it. */
  async exportAll(caller: Caller, promptId: string): Promise<{ examples: ExampleView[]; results: ResultView[] }> {
    const { examples } = await this.list(caller, promptId);
    const rows = await this.store.resultsOf(caller.projectId, promptId);
    return { examples, results: rows.map(toResultView) };
  }

  async importAll(
    caller: Caller,
    promptId: string,
    body: ImportExamplesBody,
  ): Promise<{ examples: number; results: number }> {
    requireAccess(caller, "write", "importing examples");
    await this.requirePrompt(caller, promptId);
    const existing = await this.store.listExamples(caller.projectId, promptId);
    const ids = new Set([...existing.map((e) => e.id), ...body.examples.map((e) => e.id)]);
    if (ids.size > PLAYGROUND_LIMITS.examplesPerPrompt) {
      throw badRequest(`examples: a prompt may have at most ${PLAYGROUND_LIMITS.examplesPerPrompt}`);
    }
    body.results.forEach((r, i) => {
      if (!ids.has(r.example_id))
        throw badRequest(`results[${i}].example_id: ${r.example_id} is not an example of ${promptId}`);
    });
    const examples: ExampleRow[] = body.examples.map((e) => ({
      id: e.id,
      project_id: caller.projectId,
      prompt_id: promptId,
      name: e.name,
      variables: JSON.stringify(e.variables),
      messages: JSON.stringify(e.messages),
      good_answer: e.good_answer,
      created_at: e.created_at,
      updated_at: e.updated_at,
    }));
    const results: ResultRow[] = body.results.map((r) => ({
      example_id: r.example_id,
      project_id: caller.projectId,
      prompt_id: promptId,
      version: r.version,
      settings_hash: r.settings_hash,
      settings: JSON.stringify(r.settings),
      answer: JSON.stringify(r.answer),
      finish_reason: r.finish_reason,
      usage: r.usage === null ? null : JSON.stringify(r.usage),
      ttft_ms: r.timing.ttft_ms,
      total_ms: r.timing.total_ms,
      ran_at: r.ran_at,
      // Whatever the file says: this server did not produce it (a write key could forge any answer).
      imported: 1,
    }));
    return this.store.importExamples(caller.projectId, promptId, examples, results, () => newId("exa"));
  }

  /** Per version hash, how many of the prompt's examples have a kept result; and how many examples there are. */
  async tried(caller: Caller, promptId: string): Promise<{ of: number; tried: Map<string, number> }> {
    const [examples, tried] = await Promise.all([
      this.store.listExamples(caller.projectId, promptId),
      this.store.triedCounts(caller.projectId, promptId),
    ]);
    return { of: examples.length, tried };
  }

  /** A release's candidate and production (its from_version) answers per example: the newest kept of each. */
  async forRelease(caller: Caller, release: ReleaseView): Promise<ReleaseExample[]> {
    const examples = await this.store.listExamples(caller.projectId, release.prompt_id);
    const versions = [release.version, ...(release.from_version ? [release.from_version] : [])];
    const rows = await this.store.resultsOf(caller.projectId, release.prompt_id, versions);
    // The newest result run here, else the newest imported one (shown as imported): an imported answer never
    // hides one this server produced, whatever time it claims.
    const newest = (exampleId: string, version: string | null) => {
      const of = version === null ? [] : rows.filter((r) => r.example_id === exampleId && r.version === version);
      const row = of.find((r) => r.imported === 0) ?? of[0];
      return row ? toResultView(row) : null;
    };
    return examples.map((e) => ({
      example_id: e.id,
      name: e.name,
      candidate: newest(e.id, release.version),
      production: newest(e.id, release.from_version),
    }));
  }

  /**
   * Runs examples against one or two versions, or an unsaved draft and a version (docs/playground.md, "Run
   * all"): per example, the versions
   * side by side; a result kept for the same (version, example, settings) is answered at once instead.
   * Every check is made before the first event.
   */
  async prepareRunAll(caller: Caller, promptId: string, body: RunAllBody) {
    requireAccess(caller, "write", "running examples");
    const guard = body.guard ?? true;
    const targets: { ref: string; target: RunTarget; settings: RunSettings; hash: string }[] = [];
    // The draft, when there is one, is the first side; it is answered under the hash it would save as.
    const sides = [
      ...(body.draft === undefined ? [] : [{ ref: "draft", what: { draft: body.draft } }]),
      ...body.versions.map((ref) => ({ ref, what: { version: ref } })),
    ];
    // The connection first: a side without a model name runs on the connection's first listed model.
    const connection = await this.runs.connections.open(caller.projectId, body.connection);
    for (const { ref, what } of sides) {
      const target = await this.runs.target(caller, promptId, what, guard);
      const { settings, hash } = this.runs.settingsFor(target, connection, guard, body.model);
      targets.push({ ref, target, settings, hash });
    }
    const all = await this.store.listExamples(caller.projectId, promptId);
    let chosen = all;
    if (body.examples !== undefined) {
      const byId = new Map(all.map((e) => [e.id, e]));
      chosen = body.examples.map((id, i) => {
        const found = byId.get(id);
        if (!found) throw badRequest(`examples[${i}]: ${id} is not an example of ${promptId}`);
        return found;
      });
    }
    const fresh = body.fresh === true;

    const execute = async (sink: RunSink, signal: AbortSignal): Promise<void> => {
      await sink.send("start", {
        versions: targets.map((t) => ({ ref: t.ref, version: t.target.version })),
        examples: chosen.map((e) => e.id),
        settings_hash: targets.map((t) => t.hash),
      });
      const counts = { ran: 0, kept: 0, failed: 0 };
      for (const example of chosen) {
        if (signal.aborted) return;
        await Promise.all(
          targets.map(async (t) => {
            const kept = fresh ? undefined : await this.store.findResult(example.id, t.target.version, t.hash);
            if (kept) {
              counts.kept++;
              await sink.send("result", {
                example_id: example.id,
                version: t.target.version,
                kept: true,
                result: toResultView(kept),
              });
              return;
            }
            const run: PreparedRun = {
              runId: "",
              target: t.target,
              connection,
              settings: t.settings,
              settingsHash: t.hash,
              variables: JSON.parse(example.variables),
              messages: JSON.parse(example.messages),
            };
            try {
              const answer = await this.runs.call(run, signal, () => {});
              const row: ResultRow = {
                example_id: example.id,
                project_id: caller.projectId,
                prompt_id: promptId,
                version: t.target.version,
                settings_hash: t.hash,
                settings: JSON.stringify(t.settings),
                answer: JSON.stringify(answer.message),
                finish_reason: answer.finishReason,
                usage: answer.usage === null ? null : JSON.stringify(answer.usage),
                ttft_ms: answer.ttftMs,
                total_ms: answer.totalMs,
                ran_at: now(),
                imported: 0,
              };
              await this.store.keepResult(row);
              counts.ran++;
              await sink.send("result", {
                example_id: example.id,
                version: t.target.version,
                kept: false,
                result: toResultView(row),
              });
            } catch (error) {
              if (error instanceof RunStopped) return;
              if (!(error instanceof ProviderError)) throw error;
              counts.failed++;
              await sink.send("error", {
                example_id: example.id,
                version: t.target.version,
                code: error.code,
                message: error.message,
                status: error.status,
              });
            }
          }),
        );
      }
      if (!signal.aborted) await sink.send("done", counts);
    };
    return { execute };
  }
}
