/**
 * Evaluations (docs/evaluations.md): start one, read it, page its cases, stop it. Everything that can be
 * refused is refused before the evaluation exists (scope, prompt, versions, dataset, checks, connection,
 * model name and address), each naming its field. The same content (the versions under their effective
 * settings, the dataset version and the check set) is the same evaluation: when every cell is already judged,
 * the new evaluation is done at once, `reused`, with no provider call.
 */
import { randomBytes } from "node:crypto";
import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import { checkNames } from "@promptstore/core/evaluations/checks";
import type {
  CaseClass,
  CaseResultView,
  EvaluationStatus,
  EvaluationView,
  StartEvaluationBody,
} from "@promptstore/core/evaluations/evaluations";
import { EVALUATION_LIMITS } from "@promptstore/core/evaluations/evaluations";
import type { RequirementBody } from "@promptstore/core/evaluations/requirements";
import type { DraftContent } from "@promptstore/core/playground";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { LRUCache } from "lru-cache";
import type { EvaluationRow, EvaluationStore } from "../../store/evaluations/evaluations.js";
import { now } from "../../store/ids.js";
import { auditActor, type Caller, requireAccess } from "../access.js";
import type { RunService } from "../playground/run-service.js";
import type { PromptService } from "../prompts/prompt-service.js";
import type { CheckRunner } from "./check-runner.js";
import { type EvaluationPlan, type EvaluationVersion, planOf } from "./evaluation-plan.js";
import { caseViews, cellStates, classes, type EvaluationSummary, summarize } from "./evaluation-results.js";
import type { EvaluationRunner } from "./evaluation-runner.js";
import { requirementKey } from "./label-gate.js";

/** A dataset reference resolved in the caller's project (the dataset service). */
export interface DatasetResolver {
  resolve(caller: Caller, ref: string): Promise<{ id: string; version: string; case_count: number }>;
}

export interface CasesQuery {
  after?: number | undefined;
  limit?: number | undefined;
  only?: CaseClass | "all" | "changed" | undefined;
}

export interface CasesPage {
  items: CaseResultView[];
  /** The `after` of the next page, or null on the last. */
  next: number | null;
}

function newEvaluationId(): string {
  return `ev_${randomBytes(12).toString("hex")}`;
}

/** A refusal about a field, named so. */
function aboutField(error: unknown, field: string): unknown {
  if (!(error instanceof AppError)) return error;
  return new AppError(error.code, `${field}: ${error.message.replace(/^version: /, "")}`);
}

/** A refusal about one of the versions, named by its place in the request. */
function aboutVersion(error: unknown, index: number): unknown {
  if (!(error instanceof AppError)) return error;
  const message = error.message.replace(/^version: /, "");
  return new AppError(error.code, `versions[${index}]: ${message}`);
}

export class EvaluationService {
  /** Done evaluations' case classes, for the compare view's filters (one byte a case each). */
  private readonly classCache = new LRUCache<
    string,
    { classes: import("@promptstore/core/evaluations/evaluations").CaseClass[] }
  >({ max: 32 });

  constructor(
    private readonly store: EvaluationStore,
    private readonly prompts: PromptService,
    private readonly runs: RunService,
    private readonly datasets: DatasetResolver,
    private readonly checks: Pick<CheckRunner, "prepare">,
    private readonly runner: EvaluationRunner,
    private readonly meter: { reused(): void } = { reused() {} },
  ) {}

  /**
   * Starts an evaluation. `requirement` marks one run for a label's required evaluation (startRequired): the
   * label and the requirement's key then, so the label's gate finds it; the candidate is its last version.
   */
  async start(
    caller: Caller,
    promptId: string,
    body: StartEvaluationBody,
    requirement?: { label: string; key: string },
  ): Promise<EvaluationView> {
    requireAccess(caller, "write", "running an evaluation");
    const guard = body.guard ?? true;
    // The prompt first: an unknown prompt is a 404 whatever else is wrong.
    await this.prompts.listVersions(caller, promptId);
    const connection = await this.runs.connections.open(caller.projectId, body.connection);
    const dataset = await this.datasets.resolve(caller, body.dataset);
    if (dataset.case_count === 0) throw badRequest(`dataset: version ${dataset.version.slice(0, 12)} has no cases`);
    const versions: EvaluationVersion[] = [];
    for (const [i, wanted] of body.versions.entries()) {
      const what = typeof wanted === "string" ? { version: wanted } : { draft: wanted.draft };
      let target: Awaited<ReturnType<RunService["target"]>>;
      try {
        target = await this.runs.target(caller, promptId, what, guard);
      } catch (error) {
        throw aboutVersion(error, i);
      }
      const { settings, hash } = this.runs.settingsFor(target, connection, guard, body.model);
      const same = versions.findIndex((v) => v.version === target.version);
      if (same >= 0)
        throw badRequest(`versions[${i}]: is the same version as versions[${same}] (${target.version.slice(0, 12)})`);
      versions.push({
        ref: typeof wanted === "string" ? wanted : "draft",
        version: target.version,
        draft: target.draft,
        settings,
        settings_hash: hash,
        target,
      });
    }
    const checks = await this.checks.prepare(caller, body.checks, connection);
    const contentKey = sha256Hex(
      canonical({
        dataset: { id: dataset.id, version: dataset.version },
        checks: checks.hash,
        versions: versions.map((v) => ({ version: v.version, settings: v.settings_hash })),
      }),
    );
    let judged = true;
    for (const v of versions) {
      const n = await this.store.judgedCount(
        { projectId: caller.projectId, version: v.version, settingsHash: v.settings_hash },
        checks.hash,
        dataset.id,
        dataset.version,
      );
      if (n < dataset.case_count) {
        judged = false;
        break;
      }
    }
    const at = now();
    const row: EvaluationRow = {
      id: newEvaluationId(),
      project_id: caller.projectId,
      prompt_id: promptId,
      status: "running",
      content_key: contentKey,
      reused: judged ? 1 : 0,
      dataset_id: dataset.id,
      dataset_version: dataset.version,
      case_count: dataset.case_count,
      checks_hash: checks.hash,
      checks: JSON.stringify({ checks: checks.checks, names: checks.names, hash: checks.hash }),
      versions: JSON.stringify(versions),
      connection_id: connection.id,
      concurrency: body.concurrency ?? EVALUATION_LIMITS.defaultConcurrency,
      created_at: at,
      created_by: auditActor(caller),
      finished_at: null,
      reason: null,
      lease_owner: null,
      lease_until: null,
      stop_requested: 0,
      summary: null,
      requirement_label: requirement?.label ?? null,
      requirement_hash: requirement?.key ?? null,
      candidate: requirement === undefined ? null : (versions[versions.length - 1] as EvaluationVersion).version,
    };
    let summary: EvaluationSummary | undefined;
    let reusedFrom: string | null = null;
    if (judged) {
      const plan = planOf(row);
      summary = await summarize(this.store, plan);
      reusedFrom = (await this.store.latestDone(caller.projectId, contentKey))?.id ?? null;
      Object.assign(row, {
        status: "done",
        finished_at: at,
        summary: JSON.stringify({ ...summary, reused_from: reusedFrom }),
      });
    }
    await this.store.insert(row);
    await this.prompts.recordActivity(caller.projectId, promptId, {
      audit: [
        {
          orgId: caller.orgId,
          projectId: caller.projectId,
          at,
          actor: auditActor(caller),
          action: "evaluation.started",
          target: promptId,
          before: null,
          after: row.id,
        },
      ],
      ...(judged ? { event: completedEvent(planOf(row), "done", summary as EvaluationSummary) } : {}),
    });
    if (judged) this.meter.reused();
    else this.runner.launch(row.id);
    return this.view(row, summary);
  }

  /**
   * Runs a label's required evaluation for a version (a reference, `latest` by default, or a draft): its
   * dataset at the version it resolves to now, its checks, connection and model; against the label's current
   * version too when it asks for no regression. The evaluation is tagged so that the label's gate finds it.
   */
  async startRequired(
    caller: Caller,
    promptId: string,
    label: string,
    body: { version?: string | undefined; draft?: DraftContent | undefined },
  ): Promise<EvaluationView> {
    requireAccess(caller, "write", "running an evaluation");
    const settings = (await this.prompts.labelSettings(caller)).labels.find((l) => l.name === label);
    const requirement = settings?.required_evaluation;
    if (!requirement) throw badRequest(`label: ${label} has no required evaluation`);
    const guard = requirement.guard ?? true;
    const wanted = body.draft !== undefined ? { draft: body.draft } : { version: body.version ?? "latest" };
    let candidate: string;
    try {
      candidate = (await this.runs.target(caller, promptId, wanted, guard)).version;
    } catch (error) {
      throw body.draft !== undefined ? error : aboutField(error, "version");
    }
    const current = await this.labelVersion(caller, promptId, label);
    const dataset = await this.datasets.resolve(caller, requirement.dataset);
    const candidateRef: StartEvaluationBody["versions"][number] =
      body.draft !== undefined ? { draft: body.draft } : candidate;
    const versions: StartEvaluationBody["versions"] =
      requirement.no_regression && current !== null && current !== candidate ? [current, candidateRef] : [candidateRef];
    return this.start(
      caller,
      promptId,
      {
        versions,
        dataset: `${dataset.id}@${dataset.version}`,
        checks: requirement.checks,
        connection: requirement.connection,
        ...(requirement.model !== undefined ? { model: requirement.model } : {}),
        guard,
      },
      { label, key: requirementKey(sha256Hex(canonical(requirement)), dataset.version) },
    );
  }

  /** What a label of the prompt serves now (a rollout's own version, not its candidate), or null. */
  private async labelVersion(caller: Caller, promptId: string, label: string): Promise<string | null> {
    try {
      const resolved = await this.prompts.resolveRead(caller, promptId, { version: label });
      return (resolved.kind === "single" ? resolved.read : resolved.arms.current).hash;
    } catch (error) {
      if (error instanceof AppError && error.code === "not_found") return null;
      throw error;
    }
  }

  /**
   * Refuses a requirement that could never run, before a label takes it: its dataset, its connection and model
   * name, and its checks (judge prompts, webhook endpoints), each named under `required_evaluation`.
   */
  async checkRequirement(caller: Caller, requirement: RequirementBody): Promise<void> {
    await checkRequirement({ datasets: this.datasets, runs: this.runs, checks: this.checks }, caller, requirement);
  }

  async get(caller: Caller, id: string): Promise<EvaluationView> {
    requireAccess(caller, "read", "reading an evaluation");
    const row = await this.find(caller, id);
    return this.view(row);
  }

  async list(caller: Caller, promptId: string, limit = 20): Promise<{ evaluations: EvaluationView[] }> {
    requireAccess(caller, "read", "reading evaluations");
    await this.prompts.listVersions(caller, promptId);
    const rows = await this.store.list(caller.projectId, promptId, limit);
    const evaluations: EvaluationView[] = [];
    // A running one's numbers are summed as they stand; a list shows its progress only.
    for (const row of rows)
      evaluations.push(await this.view(row, row.status === "running" ? emptySummary(row) : undefined));
    return { evaluations };
  }

  /** Asks the evaluation to stop, wherever it runs; what was judged stays kept. */
  async stop(caller: Caller, id: string): Promise<EvaluationView> {
    requireAccess(caller, "write", "stopping an evaluation");
    const row = await this.find(caller, id);
    if (row.status === "running" && (await this.store.requestStop(caller.projectId, id))) {
      this.runner.stopHere(id);
      await this.prompts.recordActivity(caller.projectId, row.prompt_id, {
        audit: [
          {
            orgId: caller.orgId,
            projectId: caller.projectId,
            at: now(),
            actor: auditActor(caller),
            action: "evaluation.stopped",
            target: row.prompt_id,
            before: null,
            after: id,
          },
        ],
      });
    }
    return this.view(await this.find(caller, id));
  }

  /** A page of cases with each version's cell, in dataset order, optionally only those of one class. */
  async cases(caller: Caller, id: string, query: CasesQuery): Promise<CasesPage> {
    requireAccess(caller, "read", "reading an evaluation");
    const row = await this.find(caller, id);
    const plan = planOf(row);
    const limit = query.limit ?? EVALUATION_LIMITS.casesPage;
    const after = query.after ?? -1;
    const only = query.only ?? "all";
    let positions: number[];
    if (only === "all") {
      positions = [];
      for (let p = after + 1; p < row.case_count && positions.length < limit; p++) positions.push(p);
    } else {
      const all = await this.classesOf(plan);
      positions = [];
      for (let p = after + 1; p < all.length && positions.length < limit; p++) {
        const c = all[p] as CaseClass;
        if (c === only || (only === "changed" && (c === "regression" || c === "improvement"))) positions.push(p);
      }
    }
    const items = await caseViews(this.store, plan, positions);
    const last = positions[positions.length - 1];
    const more = last !== undefined && positions.length === limit && last < row.case_count - 1;
    return { items, next: more ? (last as number) : null };
  }

  private async classesOf(plan: EvaluationPlan): Promise<CaseClass[]> {
    const cached = this.classCache.get(plan.row.id);
    if (cached) return cached.classes;
    const found = classes(await cellStates(this.store, plan), plan.row.case_count);
    if (plan.row.status !== "running") this.classCache.set(plan.row.id, { classes: found });
    return found;
  }

  private async find(caller: Caller, id: string): Promise<EvaluationRow> {
    const row = await this.store.find(caller.projectId, id);
    if (!row) throw notFound(`evaluation ${id} not found`);
    return row;
  }

  private async view(row: EvaluationRow, given?: EvaluationSummary): Promise<EvaluationView> {
    const plan = planOf(row);
    const stored =
      row.summary === null
        ? undefined
        : (JSON.parse(row.summary) as Partial<EvaluationSummary> & { reused_from?: string | null });
    // A running evaluation shows the numbers its runner saved at its last tick (at most a second old): one row
    // read, however many cases it has, so that watching it never slows the reads beside it. Its sums from
    // every kept cell, and `compare`, come when it ends.
    const summary =
      given ??
      (stored?.versions !== undefined
        ? (stored as EvaluationSummary)
        : row.status === "running"
          ? emptySummary(row)
          : await summarize(this.store, plan));
    return {
      id: row.id,
      prompt_id: row.prompt_id,
      status: row.status as EvaluationStatus,
      reused: row.reused === 1,
      reused_from: stored?.reused_from ?? null,
      dataset: { id: row.dataset_id, version: row.dataset_version, cases: row.case_count },
      checks_hash: row.checks_hash,
      checks: plan.checks.checks,
      check_names: plan.names,
      connection: row.connection_id,
      concurrency: row.concurrency,
      progress: summary.progress,
      versions: summary.versions,
      compare: summary.compare,
      created_at: row.created_at,
      created_by: row.created_by,
      finished_at: row.finished_at,
      reason: row.reason,
      required_by: row.requirement_label,
    };
  }

  /** Where a running evaluation stands, from the progress its runner saves, without summing its cases. */
  async progress(
    caller: Caller,
    id: string,
  ): Promise<{ status: EvaluationStatus; progress: { done: number; total: number } }> {
    requireAccess(caller, "read", "reading an evaluation");
    const row = await this.find(caller, id);
    const stored = row.summary === null ? undefined : (JSON.parse(row.summary) as Partial<EvaluationSummary>);
    const total = row.case_count * planOf(row).versions.length;
    return { status: row.status as EvaluationStatus, progress: stored?.progress ?? { done: 0, total } };
  }
}

/** The per-version numbers of a list entry while it runs: its progress, not yet its sums. */
function emptySummary(row: EvaluationRow): EvaluationSummary {
  const plan = planOf(row);
  const stored = row.summary === null ? undefined : (JSON.parse(row.summary) as Partial<EvaluationSummary>);
  const total = row.case_count * plan.versions.length;
  return {
    versions: plan.versions.map((v) => ({
      ref: v.ref,
      version: v.version,
      draft: v.draft,
      model: v.settings.model,
      settings_hash: v.settings_hash,
      passed: 0,
      failed: 0,
      errored: 0,
      pending: row.case_count,
      pass_rate: null,
      scores: Object.fromEntries(plan.names.map((n) => [n, null])),
      check_pass_rates: Object.fromEntries(plan.names.map((n) => [n, null])),
      tokens: { input: 0, output: 0 },
      latency_ms: { p50: null, p95: null },
    })),
    compare: null,
    progress: stored?.progress ?? { done: 0, total },
  };
}

/** The `evaluation.completed` event of an evaluation that ended. */
export function completedEvent(
  plan: EvaluationPlan,
  status: "done" | "failed" | "stopped",
  summary: EvaluationSummary,
) {
  return {
    type: "evaluation.completed" as const,
    version: (plan.versions[0] as EvaluationVersion).version,
    evaluation: {
      id: plan.row.id,
      status,
      reused: plan.row.reused === 1,
      dataset: { id: plan.row.dataset_id, version: plan.row.dataset_version },
      checks_hash: plan.row.checks_hash,
      versions: summary.versions.map((v) => ({
        version: v.version,
        draft: v.draft,
        passed: v.passed,
        failed: v.failed,
        errored: v.errored,
        pass_rate: v.pass_rate,
      })),
    },
  };
}

/**
 * Refuses a requirement that could never run, before a label takes it: its dataset, its connection and model
 * name, and its checks (judge prompts, webhook endpoints), each named under `required_evaluation`. The one
 * check, for the server and for the operator's CLI alike.
 */
export async function checkRequirement(
  deps: { datasets: DatasetResolver; runs: Pick<RunService, "connections">; checks: Pick<CheckRunner, "prepare"> },
  caller: Caller,
  requirement: RequirementBody,
): Promise<void> {
  const under = (error: unknown) =>
    error instanceof AppError ? new AppError(error.code, `required_evaluation.${error.message}`) : error;
  try {
    await deps.datasets.resolve(caller, requirement.dataset);
    const connection = await deps.runs.connections.open(caller.projectId, requirement.connection);
    await deps.checks.prepare(caller, requirement.checks, connection);
    for (const name of Object.keys(requirement.min_check_pass_rates ?? {})) {
      if (!checkNames(requirement.checks).includes(name)) {
        throw badRequest(`min_check_pass_rates.${name}: no check of the requirement is named ${name}`);
      }
    }
  } catch (error) {
    throw under(error);
  }
}
