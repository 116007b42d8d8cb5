import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import type { RequirementBody } from "@promptstore/core/evaluations/requirements";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import type { PlanSpec } from "@promptstore/core/rollouts/plan-view";
import type { LabelSettingView, ReleaseStatus, ReleaseView } from "@promptstore/core/views";
import type { NewAuditEntry } from "../../store/audit.js";
import type { NewEvent, NewProjectEvent } from "../../store/events.js";
import { newId, now } from "../../store/ids.js";
import type { LabelSettings, LabelStore, ReleaseRow } from "../../store/prompts/labels.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import { auditActor, type Caller, requireAccess, requirePerson } from "../access.js";
import { releaseShownTo } from "../authors.js";
import { type LabelGate, labelState, moveLabel } from "./label-moves.js";
import { insertPlan } from "./plans/plan-records.js";
import { PromptChange, requirePrompt, resolveHash } from "./prompt-changes.js";

/**
 * Release requests (docs/releases.md): how a protected label moves. Anyone who could move an unprotected
 * label asks; a person who may approve, and did not ask, decides; approval moves the label only from where
 * it stood when asked (otherwise the request is stale), in the same transaction that decides it.
 */

/** What the release functions need of PromptService: its store, its recording of a change, and its notice. */
export interface ReleaseContext {
  store: ProjectStore;
  record(tx: ProjectStore, change: PromptChange): Promise<void>;
  changed(promptId: string): void;
  /** The labels' required evaluations: an approval moves a label only to a version that passed. */
  gate: LabelGate;
  /** Records a change of the project's own (label settings): its audit rows and its events, about no prompt. */
  recordProject(tx: ProjectStore, audit: NewAuditEntry[], events: NewProjectEvent[]): Promise<void>;
  /** Called after commit when `recordProject` recorded events: streams and webhooks read them. */
  projectChanged(): void;
}

export async function requestRelease(
  context: ReleaseContext,
  caller: Caller,
  promptId: string,
  body: {
    label: string;
    version: string;
    percent?: number | undefined;
    message?: string | undefined;
    plan?: PlanSpec | undefined;
  },
): Promise<ReleaseView> {
  requireAccess(caller, "publish", "requesting a release");
  // A plan's request rolls the label out to its first step; the approval covers every later one.
  const first = body.plan?.steps[0]?.percent;
  if (first !== undefined && body.percent !== undefined && body.percent !== first) {
    throw badRequest(`percent: must be the plan's first step's percent (${first}), or left out`);
  }
  const release = await context.store.transaction(async (tx) => {
    await tx.lockPrompt(promptId);
    const prompt = await requirePrompt(tx, promptId);
    const version = body.version === "latest" ? prompt.latest_version : await resolveHash(tx, promptId, body.version);
    const { version: from } = await labelState(tx, prompt, body.label);
    if (body.plan && from === null) {
      throw badRequest(`label: ${body.label} is not set on prompt ${promptId}; move it there before a plan`);
    }
    if (body.plan && from === version) throw badRequest(`version: ${body.label} serves it already`);
    const at = now();
    const row: ReleaseRow = {
      id: newId("rel"),
      prompt_id: promptId,
      label: body.label,
      version,
      from_version: from,
      percent: first ?? body.percent ?? null,
      message: body.message ?? "",
      status: "pending",
      requested_by: caller.actor,
      requested_at: at,
      decided_by: null,
      decided_at: null,
      comment: null,
      plan: body.plan ? JSON.stringify(body.plan) : null,
    };
    await tx.labels().insertRelease(row);
    const change = new PromptChange(caller, promptId, at)
      .audited("release.requested", from, version, `${promptId}:${body.label}`)
      .event("release.requested", version, prompt.production_version, prompt.latest_version, releaseDetails(row));
    await context.record(tx, change);
    return row;
  });
  context.changed(promptId);
  return viewOf(release);
}

export async function listReleases(
  context: Pick<ReleaseContext, "store">,
  caller: Caller,
  query: { status?: ReleaseStatus | undefined; limit?: number | undefined },
): Promise<{ releases: ReleaseView[] }> {
  requireAccess(caller, "read", "listing releases");
  const rows = await context.store.labels().listReleases(query.status, query.limit ?? 100);
  return { releases: rows.map((row) => releaseShownTo(caller, viewOf(row))) };
}

export async function getRelease(
  context: Pick<ReleaseContext, "store">,
  caller: Caller,
  id: string,
): Promise<ReleaseView> {
  requireAccess(caller, "read", "reading a release");
  const row = await context.store.labels().getRelease(id);
  if (!row) throw notFound(`release ${id} not found`);
  return releaseShownTo(caller, viewOf(row));
}

/**
 * The four-eyes rule: the approver did not ask, neither in person nor through a key they created (a request
 * made with a key counts as made by its creator too, so an owner cannot approve their own request by
 * making it with a key). A key whose creator is not recorded is nobody's (docs/decisions.md).
 */
async function requireOtherRequester(
  labels: ReturnType<ProjectStore["labels"]>,
  requestedBy: string,
  approver: string,
): Promise<void> {
  if (requestedBy === approver) {
    throw new AppError("forbidden", "release: you requested this release; someone else must approve it");
  }
  if (!requestedBy.startsWith("key:")) return;
  if ((await labels.keyCreators(requestedBy.slice("key:".length))).includes(approver)) {
    throw new AppError(
      "forbidden",
      "release: this release was requested with a key you created; someone else must approve it",
    );
  }
}

/**
 * Approves or rejects a pending request. Approval moves the label, atomically with the decision, and only
 * if the label still points where it pointed when the request was made; otherwise the request becomes
 * `stale`. Of two decisions racing, the conditional update lets one win: the label moves once.
 */
export async function decideRelease(
  context: ReleaseContext,
  caller: Caller,
  id: string,
  decision: { approve: boolean; comment?: string | undefined },
): Promise<ReleaseView> {
  requirePerson(caller, "approve", decision.approve ? "approving a release" : "rejecting a release");
  let promptId = "";
  const decided = await context.store.transaction(async (tx) => {
    const labels = tx.labels();
    const row = await labels.getRelease(id);
    if (!row) throw notFound(`release ${id} not found`);
    promptId = row.prompt_id;
    if (row.status !== "pending") throw new AppError("conflict", `release: ${id} is already ${row.status}`);
    if (decision.approve) await requireOtherRequester(labels, row.requested_by, caller.actor);
    await tx.lockPrompt(row.prompt_id);
    const prompt = await tx.getPrompt(row.prompt_id);
    const at = now();
    const current = prompt ? (await labelState(tx, prompt, row.label)).version : null;
    // A version the prompt does not hold (a request that outlived its prompt) can never be approved.
    const held = prompt !== undefined && (await tx.holdsVersion(prompt.id, row.version));
    const status: ReleaseStatus = !decision.approve
      ? "rejected"
      : prompt && !held
        ? "cancelled"
        : prompt && current === row.from_version
          ? "approved"
          : "stale";
    const outcome = { status, decided_by: caller.actor, decided_at: at, comment: decision.comment ?? null };
    if (!(await labels.decideRelease(id, outcome))) {
      throw new AppError("conflict", `release: ${id} was decided meanwhile`);
    }
    const done: ReleaseRow = { ...row, ...outcome };
    if (!prompt) return done;
    const change = new PromptChange(caller, row.prompt_id, at);
    if (status === "approved") {
      await moveLabel(
        tx,
        change,
        prompt,
        { label: row.label, target: row.version, percent: row.percent ?? undefined },
        at,
        context.gate,
      );
      // A request with a plan starts it, from the rollout the approval just made (docs/rollouts.md "Plans").
      if (row.plan !== null && row.from_version !== null) {
        const spec = JSON.parse(row.plan) as PlanSpec;
        const plan = { promptId: row.prompt_id, label: row.label, version: row.version, from: row.from_version };
        await insertPlan(tx, change, { ...plan, spec, releaseId: row.id }, row.requested_by, at);
      }
    }
    if (status === "cancelled") change.audited("release.cancelled", row.from_version, row.version, releaseTarget(row));
    const type: NewEvent["type"] = status === "rejected" ? "release.rejected" : "release.approved";
    if (status === "approved" || status === "rejected") {
      change
        .audited(type, row.from_version, row.version, `${row.prompt_id}:${row.label}`)
        .event(type, row.version, prompt.production_version, prompt.latest_version, releaseDetails(done));
    }
    await context.record(tx, change);
    return done;
  });
  if (promptId) context.changed(promptId);
  return viewOf(decided);
}

/**
 * Ends the pending requests of a prompt being deleted (inside the deletion's transaction, its row locked):
 * each becomes `cancelled`, decided by whoever deletes, and is recorded in the audit trail. A prompt made
 * again with the same id starts with no request, as it starts with no history.
 */
export async function cancelReleasesOf(
  tx: ProjectStore,
  change: PromptChange,
  caller: Caller,
  promptId: string,
  at: string,
): Promise<void> {
  const outcome = { decided_by: caller.actor, decided_at: at, comment: "the prompt was deleted" };
  for (const row of await tx.labels().cancelPendingReleases(promptId, outcome)) {
    change.audited("release.cancelled", row.from_version, row.version, releaseTarget(row));
  }
}

/**
 * A protected label falls back only to a protected one (docs/releases.md, "Protected labels"): otherwise what
 * it serves to a prompt that lacks it would change, without approval, whenever the unprotected label moved.
 * So protecting a label whose fallback is unprotected, giving a protected label an unprotected fallback, and
 * unprotecting a label a protected one falls back to are all refused, naming the field the request sent.
 */
async function requireProtectedFallbacks(
  labels: LabelStore,
  settings: LabelSettings,
  before: LabelSettings | undefined,
  patch: { protected?: boolean | undefined; fallback?: string | null | undefined },
): Promise<void> {
  const { name, fallback } = settings;
  if (settings.protected && fallback !== null && !(await labels.settingsOf(fallback))?.protected) {
    throw new AppError(
      "conflict",
      patch.fallback !== undefined
        ? `fallback: ${name} is protected and ${fallback} is not: a protected label may fall back only to a ` +
            `protected one (protect ${fallback} first)`
        : `protected: ${name} falls back to ${fallback}, which is not protected: protect ${fallback} first, ` +
            "or remove the fallback",
    );
  }
  if (!settings.protected && before?.protected) {
    const leaning = (await labels.allSettings()).find((s) => s.protected && s.fallback === name && s.name !== name);
    if (leaning) {
      throw new AppError(
        "conflict",
        `protected: ${leaning.name} is protected and falls back to ${name}, so ${name} stays protected ` +
          `while it does (change ${leaning.name}'s fallback first)`,
      );
    }
  }
}

const releaseTarget = (row: ReleaseRow): string => `${row.prompt_id}:${row.label}`;

/** A label's settings as every surface shows them. */
export function labelSettingView(settings: LabelSettings, inUse: number): LabelSettingView {
  return {
    name: settings.name,
    description: settings.description,
    protected: settings.protected,
    fallback: settings.fallback,
    updated_at: settings.updated_at,
    in_use: inUse,
    required_evaluation: settings.requirement === null ? null : (JSON.parse(settings.requirement) as RequirementBody),
    rollback_allowed: settings.rollback_allowed,
  };
}

/** The label settings of the project, with the names in use on some prompt that have none. */
export async function labelSettings(
  context: Pick<ReleaseContext, "store">,
  caller: Caller,
): Promise<{ labels: LabelSettingView[] }> {
  requireAccess(caller, "read", "reading label settings");
  const labels = context.store.labels();
  const [settings, used, published] = await Promise.all([
    labels.allSettings(),
    labels.allLabels(),
    labels.publishedCount(),
  ]);
  const counts = new Map<string, number>();
  if (published > 0) counts.set("production", published);
  for (const { name } of used) counts.set(name, (counts.get(name) ?? 0) + 1);
  const byName = new Map<string, LabelSettingView>(
    settings.map((s) => [s.name, labelSettingView(s, counts.get(s.name) ?? 0)]),
  );
  for (const [name, count] of counts) {
    if (!byName.has(name)) {
      byName.set(name, {
        name,
        description: "",
        protected: false,
        fallback: null,
        updated_at: "",
        in_use: count,
        required_evaluation: null,
        rollback_allowed: true,
      });
    }
  }
  return { labels: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)) };
}

/** A label's requirement as its `label.requirement_changed` event states it (no settings: none, rollbacks pass). */
const requirementState = (s: LabelSettings | undefined): NewProjectEvent["requirement"] => ({
  hash: s?.requirement_hash ?? null,
  rollback_allowed: s?.rollback_allowed ?? true,
});

/**
 * Sets a label's settings (owners, and the operator); a fallback must be another label, and no cycle. A change
 * of its requirement (set, replaced, removed, or the rollback rule) is an audit row and a
 * `label.requirement_changed` event, in the same transaction.
 */
export async function configureLabel(
  context: Pick<ReleaseContext, "store" | "recordProject" | "projectChanged">,
  caller: Caller,
  name: string,
  patch: {
    description?: string | undefined;
    protected?: boolean | undefined;
    fallback?: string | null | undefined;
    required_evaluation?: RequirementBody | null | undefined;
    rollback_allowed?: boolean | undefined;
  },
): Promise<LabelSettings> {
  requirePerson(caller, "admin", "changing a label's settings");
  if (patch.fallback === name) throw badRequest("fallback: a label cannot fall back to itself");
  const events: NewProjectEvent[] = [];
  const saved = await context.store.transaction(async (tx) => {
    const labels = tx.labels();
    await labels.lockSettings();
    const before = await labels.settingsOf(name);
    const settings: LabelSettings = {
      name,
      description: patch.description ?? before?.description ?? "",
      protected: patch.protected ?? before?.protected ?? false,
      fallback: patch.fallback === undefined ? (before?.fallback ?? null) : patch.fallback,
      updated_at: now(),
      ...requirementOf(patch.required_evaluation, before),
      rollback_allowed: patch.rollback_allowed ?? before?.rollback_allowed ?? true,
    };
    // A chain that comes back to this label would never end.
    for (let next = settings.fallback, seen = 0; next !== null && seen < 8; seen++) {
      if (next === name) throw badRequest(`fallback: ${settings.fallback} falls back to ${name}: a cycle`);
      next = (await labels.settingsOf(next))?.fallback ?? null;
    }
    if (patch.protected !== undefined || patch.fallback !== undefined) {
      await requireProtectedFallbacks(labels, settings, before, patch);
    }
    await labels.saveSettings(settings);
    const was = before?.protected ? "protected" : "unprotected";
    const now_ = settings.protected ? "protected" : "unprotected";
    const entry = {
      orgId: caller.orgId,
      projectId: caller.projectId,
      at: settings.updated_at,
      actor: auditActor(caller),
      target: `label:${name}`,
    };
    const audit: NewAuditEntry[] = [{ ...entry, action: "label.configured", before: was, after: now_ }];
    // A requirement changed (set, replaced, removed, or the rollback rule): earlier passes no longer count.
    const rule = (s: LabelSettings | undefined) =>
      s?.requirement_hash ? `${s.requirement_hash}${s.rollback_allowed ? "" : " no-rollback"}` : "none";
    if (rule(before) !== rule(settings)) {
      audit.push({ ...entry, action: "label.requirement_changed", before: rule(before), after: rule(settings) });
      events.push({
        type: "label.requirement_changed",
        at: settings.updated_at,
        label: name,
        requirement: requirementState(settings),
        previous: requirementState(before),
      });
    }
    await context.recordProject(tx, audit, events);
    return settings;
  });
  if (events.length > 0) context.projectChanged();
  return saved;
}

function releaseDetails(row: ReleaseRow): Pick<NewEvent, "label" | "previous_version" | "release"> {
  return {
    label: row.label,
    previous_version: row.from_version,
    release: {
      id: row.id,
      status: row.status as ReleaseStatus,
      label: row.label,
      version: row.version,
      from_version: row.from_version,
      percent: row.percent,
      requested_by: row.requested_by,
      decided_by: row.decided_by,
      comment: row.comment,
    },
  };
}

function viewOf(row: ReleaseRow): ReleaseView {
  const { plan, ...rest } = row;
  const view: ReleaseView = { ...rest, status: row.status as ReleaseStatus };
  if (plan !== null) view.plan = JSON.parse(plan) as PlanSpec;
  return view;
}

/** The requirement columns a change of settings writes: given, removed (null), or kept (undefined). */
function requirementOf(
  given: RequirementBody | null | undefined,
  before: LabelSettings | undefined,
): Pick<LabelSettings, "requirement" | "requirement_hash"> {
  if (given === undefined) {
    return { requirement: before?.requirement ?? null, requirement_hash: before?.requirement_hash ?? null };
  }
  if (given === null) return { requirement: null, requirement_hash: null };
  return { requirement: JSON.stringify(given), requirement_hash: sha256Hex(canonical(given)) };
}
