import { AppError, badRequest } from "@promptstore/core/errors";
import type { GateState } from "@promptstore/core/evaluations/requirements";
import { PRODUCTION } from "@promptstore/core/labels";
import { shortHash } from "@promptstore/core/version-ref";
import type { NewAuditEntry } from "../../store/audit.js";
import { now } from "../../store/ids.js";
import type { PromptRow } from "../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import { endPlanOnMove } from "./plans/plan-records.js";
import type { PromptChange } from "./prompt-changes.js";

/**
 * The one home of the release path's rules: what moving a label does (a move, a rollout started, changed,
 * completed or aborted), and that a protected label moves only through an approved release request. Every
 * path that moves a label (publish, a rollout, import, the MCP tools, the dashboard, an approval) goes
 * through `moveLabel`, and every direct one through `requireUnprotected` first. `moveLabel` is also where a
 * label is kept to versions its prompt holds: it refuses any other target. (A save or create that publishes
 * points production at the version it writes in the same transaction, which the prompt holds by then.)
 */

/**
 * A label's required evaluation (issue 39): whether it lets the label point to a version. The evaluations
 * domain decides (service/evaluations/label-gate.ts); every move asks it here, inside the move's transaction.
 */
export interface LabelGate {
  /**
   * Where `target` stands against `label`'s requirement, or null when the label has none. Read in `tx`, so a
   * requirement changed concurrently is seen or waited for.
   */
  decide(
    tx: ProjectStore,
    prompt: Pick<PromptRow, "id">,
    label: string,
    target: string,
    current: string | null,
  ): Promise<GateState | null>;
}

/** No requirement anywhere: what a store without evaluations (the operator's tools) moves labels with. */
export const NO_GATE: LabelGate = { decide: async () => null };

/**
 * A move the label's required evaluation refuses: a 409 naming the label, what is missing, and the one request
 * that runs the evaluation. Its audit row is written after the refused transaction rolled back.
 */
export class GateRefusal extends AppError {
  constructor(
    message: string,
    readonly audit: NewAuditEntry,
  ) {
    super("conflict", message);
  }
}

/**
 * Asks the gate before `label` points to `target` (a move, a publish, a rollout's start, change or completion):
 * a pass is an audit row of the change; a refusal throws, with its own audit row.
 */
export async function requireGate(
  gate: LabelGate,
  tx: ProjectStore,
  change: PromptChange,
  prompt: Pick<PromptRow, "id">,
  label: string,
  target: string,
  current: string | null,
): Promise<void> {
  const state = await gate.decide(tx, prompt, label, target, current);
  if (state === null) return;
  const where = `${prompt.id}:${label}`;
  if (state.state === "passed") {
    change.audited("gate.passed", current, target, where);
    return;
  }
  const short = target.slice(0, 12);
  const how =
    `run it: POST /api/v2/prompts/${prompt.id}/labels/${label}/evaluations {"version":"${target}"}` +
    ` (or "Run required evaluation" on the release request)`;
  const what =
    state.state === "not_evaluated"
      ? `not evaluated${state.reason ? ` (${state.reason})` : ""}`
      : state.state === "failed"
        ? `failed: ${state.reason}`
        : state.reason;
  const refused = change.refusal("gate.refused", current, target, where);
  throw new GateRefusal(`label: ${label} requires a passing evaluation of ${short}: ${what}; ${how}`, refused);
}

export interface LabelMove {
  label: string;
  /** The full hash the label (or the rollout's candidate) is to point to. */
  target: string;
  /** 1 to 99 starts or changes a rollout; 100 or none moves the label. */
  percent?: number | undefined;
  /**
   * A rollout plan's own move (its start, a step, its end). Any other move of a label ends the label's active
   * plan, as aborted with the reason (docs/rollouts.md "Plans").
   */
  byPlan?: boolean;
}

export interface LabelState {
  /** What the label points to after the move; null when it is not set. */
  version: string | null;
  rollout?: { candidate: string; percent: number };
}

/**
 * Refuses, as a 403 naming the label and how to ask for it, a direct move of a protected label: only an
 * approved release request moves one. Holds for every key scope and every role.
 */
export async function requireUnprotected(
  store: ProjectStore,
  promptId: string,
  labels: readonly string[],
  doing: string,
): Promise<void> {
  if (labels.length === 0) return;
  const protectedNames = await store.labels().protectedNames();
  const label = labels.find((name) => protectedNames.has(name));
  if (label === undefined) return;
  throw new AppError(
    "forbidden",
    `label: ${label} is protected; ${doing} needs an approved release request: ` +
      `POST /api/v2/prompts/${promptId}/releases with {"label":"${label}","version":"<hash>"}, approved by an owner`,
  );
}

/** Where a label of a prompt stands now: its version and its rollout. */
export async function labelState(store: ProjectStore, prompt: PromptRow, label: string): Promise<LabelState> {
  const labels = store.labels();
  const version =
    label === PRODUCTION ? prompt.production_version : ((await labels.labelsOf(prompt.id)).get(label) ?? null);
  const rollout = (await labels.rolloutsOf(prompt.id)).get(label);
  return rollout ? { version, rollout: { candidate: rollout.candidate, percent: rollout.percent } } : { version };
}

/**
 * Moves a label inside the caller's transaction (the prompt's row locked), recording the events and audit
 * rows on `change`. Permission is the caller's to check first; this only applies the move.
 */
export async function moveLabel(
  tx: ProjectStore,
  change: PromptChange,
  prompt: PromptRow,
  move: LabelMove,
  at: string,
  gate: LabelGate,
): Promise<LabelState> {
  const { label, target } = move;
  // A label never points at a version its prompt does not hold (a request made before the prompt was
  // deleted and made again names a version of the old prompt).
  if (!(await tx.holdsVersion(prompt.id, target))) {
    throw new AppError("conflict", `version: prompt ${prompt.id} holds no version ${target}`);
  }
  const labels = tx.labels();
  const before = await labelState(tx, prompt, label);
  const current = before.version;
  const rollout = before.rollout;
  const full = move.percent === undefined || move.percent === 100;
  // What the label serves already needs no evaluation (a publish of it again, or aborting a rollout to it);
  // anything else does: a move, a rollout's start, change or completion.
  if (target !== current) await requireGate(gate, tx, change, prompt, label, target, current);
  if (!move.byPlan) {
    const production = label === PRODUCTION && (full || target === current) ? target : prompt.production_version;
    await endPlanOnMove(tx, change, prompt, label, at, change.actor, production);
  }

  if (full || target === current) {
    if (rollout) await labels.clearRollout(prompt.id, label);
    if (target === current) {
      // The label's own version again: a rollout on it is aborted; otherwise only updated_at moves, as a
      // publish of what production already serves always did.
      await tx.updatePrompt(prompt.id, { updated_at: at });
      if (rollout) abortedRollout(change, prompt, label, current, rollout);
      return { version: current };
    }
    if (label === PRODUCTION) {
      await tx.updatePrompt(prompt.id, { production_version: target, updated_at: at });
      // A plain publish's event is what it always was; one that completes a rollout also says so.
      const completes = rollout ? { label, previous_version: current, rollout: null } : {};
      change
        .audited("prompt.published", current, target)
        .event("prompt.published", target, target, prompt.latest_version, completes);
    } else {
      await labels.setLabel(prompt.id, label, target, at);
      await tx.updatePrompt(prompt.id, { updated_at: at });
      change
        .audited("label.moved", current, target, `${prompt.id}:${label}`)
        .event("prompt.label_moved", target, prompt.production_version, prompt.latest_version, {
          label,
          previous_version: current,
          rollout: null,
        });
    }
    return { version: target };
  }

  if (current === null) {
    throw badRequest(`percent: ${label} is not set on prompt ${prompt.id}; move it there before rolling out`);
  }
  const percent = move.percent as number;
  await labels.setRollout(prompt.id, { label, candidate: target, percent, started_at: at });
  await tx.updatePrompt(prompt.id, { updated_at: at });
  change
    .audited(
      "rollout.changed",
      describeRollout(rollout),
      describeRollout({ candidate: target, percent }),
      `${prompt.id}:${label}`,
    )
    .event("prompt.rollout_changed", target, prompt.production_version, prompt.latest_version, {
      label,
      previous_version: current,
      rollout: { candidate: target, percent },
    });
  return { version: current, rollout: { candidate: target, percent } };
}

/** Ends a rollout on the label, if one runs, recording it (a save that publishes moves production whole). */
export async function endRollout(
  tx: ProjectStore,
  change: PromptChange,
  prompt: PromptRow,
  label: string,
): Promise<void> {
  const rollout = (await tx.labels().rolloutsOf(prompt.id)).get(label);
  if (!rollout) return;
  await endPlanOnMove(tx, change, prompt, label, now(), change.actor, prompt.production_version);
  await tx.labels().clearRollout(prompt.id, label);
  const current = label === PRODUCTION ? prompt.production_version : null;
  abortedRollout(change, prompt, label, current, rollout);
}

function abortedRollout(
  change: PromptChange,
  prompt: PromptRow,
  label: string,
  current: string | null,
  rollout: { candidate: string; percent: number },
): void {
  change
    .audited("rollout.changed", describeRollout(rollout), null, `${prompt.id}:${label}`)
    .event("prompt.rollout_changed", current ?? rollout.candidate, prompt.production_version, prompt.latest_version, {
      label,
      previous_version: current,
      rollout: null,
    });
}

/** A rollout as the audit trail shows it (its columns hold 100 characters). */
const describeRollout = (rollout: { candidate: string; percent: number } | undefined): string | null =>
  rollout ? `${shortHash(rollout.candidate)} at ${rollout.percent}%` : null;
