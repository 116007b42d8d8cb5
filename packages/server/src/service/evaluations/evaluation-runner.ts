/**
 * Runs evaluations (docs/evaluations.md, "How an evaluation runs"). Each runs on the one instance that holds
 * its lease: the lease is renewed every tick while the instance works, and each tick also saves the progress
 * and hears a stop asked on any instance. An instance that stops lets its leases go (or they lapse, if it
 * died); any instance's sweep then takes the evaluation over and goes on from what is kept: answers and
 * verdicts are kept by content as they come, so nothing already asked is asked again. Two instances never run
 * one evaluation: taking the lease is one conditional UPDATE, and every write of the evaluation's state is
 * conditional on holding it.
 *
 * Cases are read a page at a time and handed to at most `concurrency` calls at once. A provider's 429 (and a
 * 503 that says when to come back) pauses the whole evaluation for its `Retry-After`, or an exponential backoff
 * with jitter, and the cell is asked again: the evaluation slows down and does not fail. Any other provider
 * failure fails its cell only.
 */
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import type { Check } from "@promptstore/core/evaluations/checks";
import type { Verdict } from "@promptstore/core/evaluations/verdicts";
import type { AssistantMessage } from "@promptstore/core/playground";
import type { CellRow, EvaluationStore } from "../../store/evaluations/evaluations.js";
import { now } from "../../store/ids.js";
import type { Caller } from "../access.js";
import type { ConnectionService, OpenConnection } from "../playground/connection-service.js";
import { ProviderError, RunStopped } from "../playground/model-call.js";
import type { PreparedRun, RunMeter, RunService } from "../playground/run-service.js";
import type { CheckRunner, PreparedChecks } from "./check-runner.js";
import type { EvaluationPlan } from "./evaluation-plan.js";
import { planOf } from "./evaluation-plan.js";
import { CellState, cellsOf, type EvaluationSummary, LiveSummary, summarize } from "./evaluation-results.js";
import { Pause, retryWait, Slots } from "./pacing.js";

export type CellOutcome = "passed" | "failed" | "errored";
export type EndStatus = "done" | "failed" | "stopped";

export interface EvaluationHooks {
  /** After an evaluation ended here (its row says so): the event, the webhooks, the metrics. */
  ended(plan: EvaluationPlan, status: EndStatus, summary: EvaluationSummary): Promise<void>;
  /** Each cell judged, and the provider's time when it was asked. */
  cell(outcome: CellOutcome, providerMs: number | null): void;
  /** A failure of the runner itself (not of a provider), for the log. */
  failed(error: unknown, evaluationId: string): void;
}

export interface EvaluationRunnerOptions {
  /** This instance, as the lease names it. */
  instanceId: string;
  /** How long a lease lasts unless renewed: how long a dead instance's evaluation waits to be taken over. */
  leaseMs: number;
  /** How often the lease is renewed, the progress saved and a stop heard. */
  tickMs: number;
  /** How often this instance looks for lapsed evaluations to take over. */
  sweepMs: number;
  /** Evaluations running on this instance at once; more wait for a place. */
  maxRunning: number;
  /** Model calls of all this instance's evaluations at once (each answer may hold up to the answer limit). */
  maxCalls: number;
  /** A cell is asked this many times at most while the provider says 429. */
  maxAttempts: number;
  /** The first backoff after a 429 without Retry-After; it doubles, with jitter, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RUNNER_OPTIONS: Omit<EvaluationRunnerOptions, "instanceId"> = {
  maxRunning: 8,
  maxCalls: 32,
  leaseMs: 30_000,
  tickMs: 1_000,
  sweepMs: 10_000,
  maxAttempts: 10,
  backoffMs: 1_000,
  maxBackoffMs: 60_000,
};

const PAGE = 50;
const NO_METER: RunMeter = { ran() {} };

const iso = (ms: number) => new Date(ms).toISOString();

/** What a judged cell adds to the running numbers. */
interface JudgedCell {
  state: CellState;
  verdicts: Verdict[] | null;
  tokens: { input: number; output: number } | null;
  latencyMs: number | null;
}

interface Running {
  controller: AbortController;
  stop: boolean;
  done: Promise<void>;
}

export class EvaluationRunner {
  private readonly running = new Map<string, Running>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly options: EvaluationRunnerOptions;
  private readonly calls: Slots;

  constructor(
    private readonly store: EvaluationStore,
    private readonly runs: RunService,
    private readonly connections: ConnectionService,
    private readonly checks: Pick<CheckRunner, "prepare" | "run">,
    private readonly hooks: EvaluationHooks,
    options: Partial<EvaluationRunnerOptions> & { instanceId: string },
  ) {
    this.options = { ...DEFAULT_RUNNER_OPTIONS, ...options };
    this.calls = new Slots(this.options.maxCalls);
  }

  /** Looks for lapsed evaluations now and every `sweepMs`. */
  start(): void {
    void this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), this.options.sweepMs);
    this.sweeper.unref();
  }

  /** Takes over running evaluations whose lease lapsed. */
  async sweep(): Promise<void> {
    if (this.closed) return;
    try {
      const free = this.options.maxRunning - this.running.size;
      if (free <= 0) return;
      for (const { id } of await this.store.lapsed(now(), free)) this.launch(id);
    } catch (error) {
      this.hooks.failed(error, "(sweep)");
    }
  }

  /** Runs the evaluation here, in the background, if its lease can be taken. */
  launch(id: string): void {
    // At most `maxRunning` here: another waits in the store, unleased, for this instance's next free place (the
    // sweep after a run ends) or another instance's.
    if (this.closed || this.running.has(id) || this.running.size >= this.options.maxRunning) return;
    const running: Running = { controller: new AbortController(), stop: false, done: Promise.resolve() };
    running.done = this.claimAndRun(id, running)
      .catch((error) => this.hooks.failed(error, id))
      .finally(() => {
        this.running.delete(id);
        void this.sweep();
      });
    this.running.set(id, running);
  }

  /** Stops an evaluation running here at once; one running elsewhere hears its row's stop at its next tick. */
  stopHere(id: string): void {
    const running = this.running.get(id);
    if (!running) return;
    running.stop = true;
    running.controller.abort();
  }

  /** How many evaluations run on this instance now. */
  get size(): number {
    return this.running.size;
  }

  /** Ends every run here and lets its lease go, so that another instance goes on with it. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.running.values()];
    for (const running of all) running.controller.abort();
    await Promise.all(all.map((r) => r.done));
  }

  private async claimAndRun(id: string, running: Running): Promise<void> {
    const { instanceId: owner, leaseMs, tickMs } = this.options;
    if (!(await this.store.claim(id, owner, now(), iso(Date.now() + leaseMs)))) return;
    const row = await this.store.findById(id);
    if (!row || row.status !== "running") return;
    const plan = planOf(row);
    let connection: OpenConnection;
    try {
      connection = await this.connections.open(row.project_id, row.connection_id);
    } catch (error) {
      const message = (error as Error).message;
      await this.end(plan, owner, "failed", message.startsWith("connection") ? message : `connection: ${message}`);
      return;
    }
    // The check set as it was pinned: compiled again (schemas, the judges' runs on this connection). A pinned
    // judge resolves to itself; a webhook endpoint moved to another address since is another check set.
    let checks: PreparedChecks;
    try {
      checks = await this.checks.prepare(runnerCaller(row), plan.checks.checks as Check[], connection);
    } catch (error) {
      await this.end(plan, owner, "failed", `checks: ${(error as Error).message}`);
      return;
    }
    if (checks.hash !== row.checks_hash) {
      await this.end(
        plan,
        owner,
        "failed",
        "checks: a webhook check's endpoint changed address since the evaluation started",
      );
      return;
    }
    const live = new LiveSummary(plan);
    let lost = false;
    let ticking = Promise.resolve();
    const tick = setInterval(() => {
      ticking = ticking.then(async () => {
        try {
          const renewed = await this.store.renew(id, owner, iso(Date.now() + leaseMs), JSON.stringify(live.summary()));
          if (renewed === undefined) {
            lost = true;
            running.controller.abort();
          } else if (renewed.stop) {
            running.stop = true;
            running.controller.abort();
          }
        } catch {
          // The database is away: the lease may lapse, and then another instance goes on with the evaluation.
        }
      });
    }, tickMs);
    let failure: unknown;
    try {
      await this.work(plan, checks, connection, running.controller.signal, live);
    } catch (error) {
      failure = error;
    } finally {
      clearInterval(tick);
      await ticking;
    }
    if (lost) return;
    if (failure !== undefined) {
      this.hooks.failed(failure, id);
      // A failure of the database leaves the lease to lapse (another turn goes on later); any other ends it.
      await this.end(plan, owner, "failed", `internal error: ${(failure as Error).message ?? String(failure)}`).catch(
        () => {},
      );
      return;
    }
    if (running.controller.signal.aborted && !running.stop) {
      // This instance is shutting down: another takes it over at once.
      await this.store.release(id, owner, now());
      return;
    }
    await this.end(
      plan,
      owner,
      running.stop ? "stopped" : "done",
      running.stop ? "stopped before every case was judged" : null,
    );
  }

  private async end(plan: EvaluationPlan, owner: string, wanted: EndStatus, reason: string | null): Promise<void> {
    const summary = await summarize(this.store, plan);
    const pending = summary.versions.some((v) => v.pending > 0);
    // A stop that came after the last case is a finished evaluation.
    const status: EndStatus = wanted === "stopped" && !pending ? "done" : wanted;
    const ended = await this.store.finish(plan.row.id, owner, {
      status,
      summary: JSON.stringify(summary),
      reason: status === "done" ? null : reason,
      at: now(),
    });
    if (ended) await this.hooks.ended(plan, status, summary);
  }

  private async work(
    plan: EvaluationPlan,
    checks: PreparedChecks,
    connection: OpenConnection,
    signal: AbortSignal,
    live: LiveSummary,
  ): Promise<void> {
    const slots = new Slots(plan.row.concurrency);
    const pause = new Pause();
    const inflight = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    const inner = new AbortController();
    const stopAll = () => inner.abort();
    signal.addEventListener("abort", stopAll, { once: true });
    try {
      let after = -1;
      paging: for (;;) {
        if (inner.signal.aborted) break;
        const pages = await Promise.all(plan.versions.map((_, v) => cellsOf(this.store, plan, v, after, PAGE)));
        const first = pages[0] as CellRow[];
        if (first.length === 0) break;
        for (let i = 0; i < first.length; i++) {
          for (let v = 0; v < plan.versions.length; v++) {
            const row = (pages[v] as CellRow[])[i] as CellRow;
            if (row.pass !== null || row.error_code !== null) {
              live.addKept(v, row);
              continue;
            }
            if (!(await slots.acquire(inner.signal))) break paging;
            const task: Promise<void> = this.cell(plan, checks, v, row, connection, pause, inner.signal)
              .then((judged) => {
                if (judged) live.add(v, judged);
              })
              .catch((error) => {
                failure ??= { error };
                inner.abort();
              })
              .finally(() => {
                slots.release();
                inflight.delete(task);
              });
            inflight.add(task);
          }
        }
        if (first.length < PAGE) break;
        after = (first[first.length - 1] as CellRow).position;
      }
      await Promise.all(inflight);
    } finally {
      signal.removeEventListener("abort", stopAll);
    }
    if (failure !== undefined) throw failure.error;
  }

  /** Answers and judges one case on one version; resolves whether it recorded an outcome. */
  private async cell(
    plan: EvaluationPlan,
    checks: PreparedChecks,
    v: number,
    row: CellRow,
    connection: OpenConnection,
    pause: Pause,
    signal: AbortSignal,
  ): Promise<JudgedCell | null> {
    const version = plan.versions[v] as EvaluationPlan["versions"][number];
    const evaluated = JSON.parse(row.body) as NormalCase;
    const projectId = plan.row.project_id;
    let answer: AssistantMessage;
    let providerMs: number | null = null;
    let tokens: JudgedCell["tokens"] = null;
    let latencyMs: number | null = null;
    if (row.answer !== null) {
      answer = JSON.parse(row.answer) as AssistantMessage;
      tokens = { input: row.tokens_in ?? 0, output: row.tokens_out ?? 0 };
      latencyMs = row.latency_ms;
    } else {
      const run: PreparedRun = {
        runId: "",
        target: version.target,
        connection,
        settings: version.settings,
        settingsHash: version.settings_hash,
        variables: evaluated.vars,
        messages: evaluated.messages ?? [],
      };
      for (let attempt = 1; ; attempt++) {
        await pause.wait(signal);
        if (signal.aborted) return null;
        // Every evaluation of this instance shares `maxCalls`: what answers hold in memory is bounded by it.
        if (!(await this.calls.acquire(signal))) return null;
        try {
          const got = await this.runs.call(run, signal, () => {}, NO_METER).finally(() => this.calls.release());
          answer = got.message;
          providerMs = got.totalMs;
          latencyMs = got.totalMs;
          tokens = { input: got.usage?.prompt_tokens ?? 0, output: got.usage?.completion_tokens ?? 0 };
          await this.store.keepAnswer({
            project_id: projectId,
            version: version.version,
            settings_hash: version.settings_hash,
            case_id: row.case_id,
            answer: JSON.stringify(got.message),
            finish_reason: got.finishReason,
            tokens_in: got.usage?.prompt_tokens ?? null,
            tokens_out: got.usage?.completion_tokens ?? null,
            latency_ms: got.totalMs,
            created_at: now(),
          });
          break;
        } catch (error) {
          if (error instanceof RunStopped) return null;
          if (!(error instanceof ProviderError)) throw error;
          const wait = this.retryWait(error, attempt);
          if (wait !== null) {
            pause.set(wait);
            continue;
          }
          await this.store.recordError({
            evaluation_id: plan.row.id,
            version_index: v,
            case_id: row.case_id,
            code: error.code,
            message: error.message,
            detail: null,
          });
          this.hooks.cell("errored", null);
          return { state: CellState.Errored, verdicts: null, tokens: null, latencyMs: null };
        }
      }
    }
    let outcomes: Awaited<ReturnType<CheckRunner["run"]>>;
    try {
      outcomes = await this.checks.run(checks, {
        answer,
        case: evaluated,
        caseId: row.case_id,
        version: version.version,
        responseFormat: version.settings.model.response_format,
        promptId: plan.row.prompt_id,
        evaluationId: plan.row.id,
        signal,
      });
    } catch (error) {
      // Only a stop ends a check's run: the cell stays to be judged.
      if (error instanceof RunStopped) return null;
      throw error;
    }
    const broken = outcomes.findIndex((o) => "error" in o);
    if (broken >= 0) {
      // A check cut short by a stop did not decide: the cell stays to be judged.
      if (signal.aborted) return null;
      await this.store.recordError({
        evaluation_id: plan.row.id,
        version_index: v,
        case_id: row.case_id,
        code: "check_error",
        message: `${plan.names[broken]}: ${(outcomes[broken] as { error: string }).error}`,
        detail: JSON.stringify(outcomes),
      });
      this.hooks.cell("errored", providerMs);
      return { state: CellState.Errored, verdicts: null, tokens, latencyMs };
    }
    const pass = (outcomes as Verdict[]).every((o) => o.pass);
    await this.store.keepVerdict({
      project_id: projectId,
      version: version.version,
      settings_hash: version.settings_hash,
      checks_hash: plan.checks.hash,
      case_id: row.case_id,
      pass: pass ? 1 : 0,
      verdicts: JSON.stringify(outcomes),
      created_at: now(),
    });
    this.hooks.cell(pass ? "passed" : "failed", providerMs);
    return { state: pass ? CellState.Passed : CellState.Failed, verdicts: outcomes as Verdict[], tokens, latencyMs };
  }

  private retryWait(error: ProviderError, attempt: number): number | null {
    return retryWait(error, attempt, this.options);
  }
}

/** The caller a runner acts as when it prepares an evaluation's checks again: its project, reading. */
function runnerCaller(row: { project_id: string; created_by: string | null }): Caller {
  return {
    projectId: row.project_id,
    projectName: "",
    orgId: "",
    plan: "",
    actor: row.created_by ?? "evaluation",
    access: "read",
  };
}
