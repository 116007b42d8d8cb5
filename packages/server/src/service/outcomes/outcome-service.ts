import { setImmediate } from "node:timers/promises";
import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import {
  type FleetView,
  OUTCOME_LIMITS,
  type OutcomeStep,
  type OutcomesAnswer,
  type OutcomesBody,
  type OutcomesQuery,
  type OutcomesView,
} from "@promptstore/core/outcomes";
import type { LabelHistory } from "../../store/outcomes/label-history.js";
import type { OutcomeReads } from "../../store/outcomes/outcome-reads.js";
import { hourOf, type OutcomeWrites } from "../../store/outcomes/outcome-writes.js";
import { type Caller, requireAccess } from "../access.js";
import type { ChangeBus } from "../events/change-bus.js";
import { OutcomeBuffer, type Taken } from "./outcome-buffer.js";
import { buildView, STEP_MS, stepStart } from "./outcome-views.js";
import { Placer, type Refusal, type ToPlace } from "./placement.js";

/** Outcomes folded between two turns of the event loop. */
const FOLD_CHUNK = 250;
const DAY_MS = 86_400_000;
/** Minute rows older than this are folded into hour rows; a range reaching further back is read by the hour. */
export const COMPACT_AFTER_MS = DAY_MS;
/** A range of up to 6 hours is read by the minute unless told. */
const MINUTES_UP_TO_MS = 6 * 3_600_000;
/** Points one series of an answer may hold. */
export const MAX_POINTS = 1500;
/** The fleet view counts instances heard from within this. */
export const FLEET_WINDOW_SECONDS = 300;
/** Fleet rows not heard from for this long are deleted. */
const FLEET_KEPT_MS = DAY_MS;
/** How often the maintenance runs: the events retention loop's cadence. */
const MAINTENANCE_EVERY_MS = 10 * 60_000;
/** Hours folded per maintenance pass at most (each at most 200 series): a long outage is caught up over passes. */
const COMPACTIONS_PER_PASS = 500;

export interface OutcomeServiceOptions {
  retentionDays: number;
  /** How often the buffer is written (1 s). */
  flushMs?: number;
  /** Test only: the "minute" a row spans (PROMPTSTORE_OUTCOME_MINUTE_MS). */
  minuteMs?: number;
  /** Cells and fleet rows held unwritten at most; a batch beyond it is answered 503. Half of it writes early. */
  maxBuffered?: number;
}

/** What the service tells the metrics and the log. */
export interface OutcomeHooks {
  counted?(result: "accepted" | "refused" | "dropped", n: number): void;
  failed?(what: "flush" | "maintenance", error: unknown): void;
}

/**
 * Production outcomes (docs/outcomes.md): batches are checked, placed and folded into memory; the buffer is
 * written once a second by additive upserts, so any number of instances may take outcomes for the same
 * prompt. Reading them back, the fleet, and the maintenance (compaction to hours, retention) are here too.
 */
export class OutcomeService {
  private readonly buffer: OutcomeBuffer;
  private readonly placer: Placer;
  private readonly maxBuffered: number;
  private flushing: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  private maintaining: Promise<void> | undefined;

  constructor(
    private readonly writes: OutcomeWrites,
    private readonly reads: OutcomeReads,
    private readonly history: LabelHistory,
    bus: ChangeBus,
    private readonly options: OutcomeServiceOptions,
    private readonly hooks: OutcomeHooks = {},
  ) {
    this.buffer = new OutcomeBuffer(options.minuteMs);
    this.placer = new Placer(history, bus);
    this.maxBuffered = options.maxBuffered ?? 20_000;
  }

  /** Writes the buffer every second and runs the maintenance now and every ten minutes, until `stop`. */
  start(): void {
    if (this.timers.length > 0) return;
    const flush = setInterval(() => void this.flush(), this.options.flushMs ?? 1000);
    const maintain = setInterval(() => void this.maintain(), MAINTENANCE_EVERY_MS);
    flush.unref();
    maintain.unref();
    this.timers = [flush, maintain];
    void this.maintain();
  }

  /** Stops the timers and writes what is held. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.maintaining;
    await this.flush();
    // What the last write could not take is lost with the process: say so.
    const lost = this.buffer.take().outcomes;
    if (lost > 0) this.hooks.counted?.("dropped", lost);
    this.placer.close();
  }

  /** Outcomes held, not yet written. */
  get pending(): number {
    return this.buffer.held;
  }

  /** `POST /api/v2/outcomes`: each outcome placed or refused; the fleet report kept. */
  async report(caller: Caller, body: OutcomesBody): Promise<OutcomesAnswer> {
    requireAccess(caller, "read", "reporting outcomes");
    const n = body.outcomes.length;
    if (this.buffer.size >= this.maxBuffered) {
      this.hooks.counted?.("dropped", n);
      void this.flush();
      throw new AppError(
        "unavailable",
        "outcomes: this server holds as many unwritten outcomes as it may (its database is slow or away); send them again later",
      );
    }
    const now = Date.now();
    const oldest = now - this.options.retentionDays * DAY_MS;
    const refusals: Refusal[] = [];
    const toPlace: ToPlace[] = [];
    body.outcomes.forEach((o, index) => {
      const atMs = o.at === undefined ? now : Date.parse(o.at);
      if (atMs > now + OUTCOME_LIMITS.futureMs) {
        refusals.push({ index, field: `outcomes[${index}].at`, message: "is more than 5 minutes in the future" });
        return;
      }
      if (atMs < oldest) {
        refusals.push({
          index,
          field: `outcomes[${index}].at`,
          message: `is older than the retention (${this.options.retentionDays} days)`,
        });
        return;
      }
      toPlace.push({
        index,
        promptId: o.prompt,
        version: o.version,
        label: o.label === undefined || o.label === "latest" ? undefined : o.label,
        arm: o.arm,
        atMs,
        latencyMs: o.latency_ms ?? 0,
      });
    });
    // A batch of 1 000 costs milliseconds of the event loop: reads queued meanwhile go first between its stages.
    await setImmediate();
    refusals.push(...(await this.placer.place(caller.projectId, toPlace)));
    await setImmediate();
    const refused = new Set(refusals.map((r) => r.index));
    for (let i = 0; i < toPlace.length; i++) {
      const p = toPlace[i] as ToPlace;
      if (i > 0 && i % FOLD_CHUNK === 0) await setImmediate();
      if (refused.has(p.index)) continue;
      const o = body.outcomes[p.index] as OutcomesBody["outcomes"][number];
      this.buffer.add(
        {
          projectId: caller.projectId,
          promptId: p.promptId,
          version: p.version,
          label: p.label ?? "",
          arm: p.arm ?? "",
        },
        p.atMs,
        {
          ok: o.ok,
          latencyMs: o.latency_ms,
          score: o.score,
          tokensInput: o.tokens?.input,
          tokensOutput: o.tokens?.output,
        },
      );
    }
    if (body.instance) await this.keepReport(caller.projectId, body.instance, new Date(now).toISOString());
    const accepted = n - refusals.length;
    if (accepted > 0) this.hooks.counted?.("accepted", accepted);
    if (refusals.length > 0) this.hooks.counted?.("refused", refusals.length);
    if (this.buffer.size >= this.maxBuffered / 2) void this.flush();
    return { accepted, refused: refusals.sort((a, b) => a.index - b.index) };
  }

  /** A client's fleet report: what it serves, per prompt and label, where the version is of the prompt. */
  private async keepReport(projectId: string, instance: NonNullable<OutcomesBody["instance"]>, at: string) {
    const serving = new Map<string, { promptId: string; label: string; version: string }>();
    for (const s of instance.serving ?? []) {
      const label = s.label === undefined || s.label === "latest" ? "" : s.label;
      serving.set(`${s.prompt}\u0000${label}`, { promptId: s.prompt, label, version: s.version });
    }
    if (serving.size === 0) return;
    const held = await this.placer.holds(projectId, [...serving.values()]);
    for (const s of serving.values()) {
      if (!held.has(`${s.promptId}\u0000${s.version}`)) continue;
      this.buffer.report({
        projectId,
        promptId: s.promptId,
        label: s.label,
        instanceId: instance.id,
        version: s.version,
        sdk: instance.sdk ?? null,
        lastSeen: at,
      });
    }
  }

  /** Writes what the buffer holds, once at a time; what fails is kept for the next try while it fits. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.buffer.size === 0) return Promise.resolve();
    const taken = this.buffer.take();
    this.flushing = this.writes
      .write(taken.batch)
      .catch((error) => this.giveBack(taken, error))
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private giveBack(taken: Taken, error: unknown): void {
    this.hooks.failed?.("flush", error);
    if (this.buffer.size + taken.batch.cells.length + taken.batch.fleet.length <= this.maxBuffered) {
      this.buffer.restore(taken);
    } else {
      this.hooks.counted?.("dropped", taken.outcomes);
    }
  }

  /**
   * Folds minute rows older than a day into hour rows, deletes what is older than the retention (and fleet rows
   * a day old, and label history no outcome can be checked against any more). Every instance runs it; it is
   * safe with many. `nowMs` is the time it runs as.
   */
  maintain(nowMs = Date.now()): Promise<void> {
    if (this.maintaining) return this.maintaining;
    this.maintaining = this.runMaintenance(nowMs)
      .catch((error) => this.hooks.failed?.("maintenance", error))
      .finally(() => {
        this.maintaining = undefined;
      });
    return this.maintaining;
  }

  private async runMaintenance(nowMs: number): Promise<void> {
    const compactBefore = hourOf(new Date(nowMs - COMPACT_AFTER_MS).toISOString());
    for (let pass = 0; pass < COMPACTIONS_PER_PASS; pass++) {
      if (!(await this.writes.compactOldestHour(compactBefore))) break;
    }
    const retention = this.options.retentionDays * DAY_MS;
    await this.writes.prune(new Date(nowMs - retention).toISOString(), new Date(nowMs - FLEET_KEPT_MS).toISOString());
    // An outcome at the retention's edge is checked against an hour (its latency) and a minute before it.
    await this.history.prune(new Date(nowMs - retention - 2 * 3_600_000).toISOString());
  }

  /** `GET /api/v2/prompts/:id/outcomes`. */
  async view(caller: Caller, promptId: string, query: OutcomesQuery): Promise<OutcomesView> {
    requireAccess(caller, "read", "reading outcomes");
    const now = Date.now();
    const toMs = query.to === undefined ? now : Date.parse(query.to);
    const requestedFrom = query.from === undefined ? toMs - DAY_MS : Date.parse(query.from);
    if (requestedFrom >= toMs) throw badRequest("from: must be before to");
    let step: OutcomeStep = query.step ?? (toMs - requestedFrom <= MINUTES_UP_TO_MS ? "minute" : "hour");
    // Minutes older than a day are kept as hours only.
    if (step === "minute" && requestedFrom < now - COMPACT_AFTER_MS) step = "hour";
    const from = stepStart(requestedFrom, step);
    const points = Math.ceil((toMs - Date.parse(from)) / STEP_MS[step]);
    if (points > MAX_POINTS) {
      throw badRequest(`from: the range holds ${points} ${step}s; ${MAX_POINTS} at most (ask by the hour, or less)`);
    }
    if (!(await this.reads.promptExists(caller.projectId, promptId))) throw notFound(`prompt ${promptId} not found`);
    const label = query.label === undefined ? undefined : query.label === "latest" ? "" : query.label;
    const series = await this.reads.series(caller.projectId, promptId, label);
    const ids = series.map((s) => s.id);
    const to = new Date(toMs).toISOString();
    const byHour = step === "hour";
    const [counts, latency] =
      ids.length === 0
        ? [[], []]
        : [await this.reads.counts(ids, from, to, byHour), await this.reads.latency(ids, from, to, byHour)];
    return buildView({ prompt: promptId, from, to, step, by: query.by ?? "version" }, series, counts, latency);
  }

  /** `GET /api/v2/prompts/:id/fleet`. */
  async fleet(caller: Caller, promptId: string): Promise<FleetView> {
    requireAccess(caller, "read", "reading the fleet");
    if (!(await this.reads.promptExists(caller.projectId, promptId))) throw notFound(`prompt ${promptId} not found`);
    const since = new Date(Date.now() - FLEET_WINDOW_SECONDS * 1000).toISOString();
    const { groups, instances } = await this.reads.fleet(caller.projectId, promptId, since);
    return {
      prompt: promptId,
      window_seconds: FLEET_WINDOW_SECONDS,
      serving: groups.map((g) => ({
        label: g.label === "" ? null : g.label,
        version: g.version,
        instances: g.instances,
        last_seen: g.lastSeen,
      })),
      instances,
    };
  }
}
