/**
 * Required evaluations (issue 39, docs/evaluations.md "Required evaluations"): the gate every label move asks
 * (service/prompts/label-moves.ts). A label with a requirement points to a version only when a finished
 * evaluation run for that requirement, of that exact version, passed its thresholds; or, when the label allows
 * it, when the version is one the label served before (a rollback). Decided in the move's transaction.
 *
 * A requirement's key is the hash of its JSON and of the dataset version it resolves to now (pinned, or the
 * dataset's newest): a new dataset version, other checks or other thresholds make earlier passes stale.
 */

import type { VersionSummary } from "@promptstore/core/evaluations/evaluations";
import type { GateState, RequirementBody } from "@promptstore/core/evaluations/requirements";
import { PRODUCTION } from "@promptstore/core/labels";
import { sha256Hex } from "@promptstore/core/prompts/hash";
import type { Kysely } from "kysely";
import type { EvaluationRow } from "../../store/evaluations/evaluations.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import type { Database } from "../../store/schema.js";
import type { LabelGate } from "../prompts/prompt-service.js";
import type { EvaluationSummary } from "./evaluation-results.js";

/** The key an evaluation run for a requirement carries: the requirement's hash and its dataset version then. */
export function requirementKey(requirementHash: string, datasetVersion: string): string {
  return sha256Hex(`${requirementHash}:${datasetVersion}`);
}

/** A requirement's dataset: its id, and the version it names or null (follows the newest). */
export function requiredDataset(requirement: Pick<RequirementBody, "dataset">): { id: string; pinned: string | null } {
  const [id, pinned] = requirement.dataset.split("@") as [string, string | undefined];
  return { id, pinned: pinned ?? null };
}

const short = (hash: string) => hash.slice(0, 12);

/** The dataset version a requirement resolves to now, or why it cannot. */
async function datasetVersionNow(
  db: Kysely<Database>,
  projectId: string,
  requirement: RequirementBody,
): Promise<{ version: string } | { missing: string }> {
  const { id, pinned } = requiredDataset(requirement);
  const dataset = await db
    .selectFrom("datasets")
    .select("head")
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!dataset || dataset.head === null)
    return { missing: `its dataset ${id} is gone; change the label's requirement` };
  if (pinned === null) return { version: dataset.head };
  const found = await db
    .selectFrom("dataset_versions")
    .select("hash")
    .where("dataset_id", "=", id)
    .where("hash", ">=", pinned)
    .where("hash", "<", `${pinned}\uffff`)
    .limit(2)
    .execute();
  if (found.length !== 1) return { missing: `its dataset version ${id}@${pinned} is not one version of the dataset` };
  return { version: (found[0] as { hash: string }).hash };
}

/** Whether the label pointed to `target` at some time before: a publish, a move or a release of it, to or from. */
async function servedBefore(
  db: Kysely<Database>,
  projectId: string,
  promptId: string,
  label: string,
  target: string,
): Promise<boolean> {
  const row = await db
    .selectFrom("audit_log")
    .select("id")
    .where("project_id", "=", projectId)
    .where((eb) =>
      label === PRODUCTION
        ? eb.and([eb("target", "=", promptId), eb("action", "=", "prompt.published")])
        : eb.and([eb("target", "=", `${promptId}:${label}`), eb("action", "=", "label.moved")]),
    )
    .where((eb) => eb.or([eb("after", "=", target), eb("before", "=", target)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The thresholds a finished evaluation's candidate missed, in words; empty when it met them all. */
export function missedThresholds(
  requirement: RequirementBody,
  candidate: VersionSummary,
  regressions: number | null,
): string[] {
  const missed: string[] = [];
  const rate = candidate.pass_rate ?? 0;
  if (candidate.pending > 0) missed.push(`${candidate.pending} cases not judged`);
  if (rate < requirement.min_pass_rate) missed.push(`pass rate ${rate} < ${requirement.min_pass_rate}`);
  for (const [name, least] of Object.entries(requirement.min_check_pass_rates ?? {})) {
    const got = candidate.check_pass_rates[name] ?? 0;
    if (got < least) missed.push(`${name} pass rate ${got} < ${least}`);
  }
  if (requirement.no_regression && regressions !== null && regressions > 0) {
    missed.push(
      `${regressions} ${regressions === 1 ? "case passes" : "cases pass"} on the label's version and not on this one`,
    );
  }
  return missed;
}

export class RequiredEvaluations implements LabelGate {
  async decide(
    tx: ProjectStore,
    prompt: { id: string },
    label: string,
    target: string,
    current: string | null,
  ): Promise<GateState | null> {
    const db = tx.connection();
    // The label's settings row locked for the rest of the move's transaction: a requirement changed meanwhile
    // is waited for and then read, and a change asked after this waits for the move (two instances racing an
    // approval and a requirement change never see a move under a requirement replaced before it committed).
    await db
      .updateTable("label_settings")
      .set((eb) => ({ updated_at: eb.ref("updated_at") }))
      .where("project_id", "=", tx.projectId)
      .where("name", "=", label)
      .execute();
    const settings = await tx.labels().settingsOf(label);
    if (!settings || settings.requirement === null || settings.requirement_hash === null) return null;
    const projectId = tx.projectId;
    if (settings.rollback_allowed && (await servedBefore(db, projectId, prompt.id, label, target))) {
      return { state: "passed", evaluation: null, pass_rate: null, rollback: true };
    }
    const requirement = JSON.parse(settings.requirement) as RequirementBody;
    const dataset = await datasetVersionNow(db, projectId, requirement);
    if ("missing" in dataset) return { state: "not_evaluated", reason: dataset.missing };
    const key = requirementKey(settings.requirement_hash, dataset.version);
    const rows = await db
      .selectFrom("evaluations")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", prompt.id)
      .where("requirement_label", "=", label)
      .where("candidate", "=", target)
      .orderBy("created_at", "desc")
      .limit(20)
      .execute();
    const forNow = rows.filter((r) => r.requirement_hash === key);
    const done = forNow.find((r) => r.status === "done");
    if (done) return judge(done, requirement, target, current);
    const running = forNow.find((r) => r.status === "running");
    if (running)
      return {
        state: "not_evaluated",
        reason: `its evaluation ${running.id} is still running`,
        evaluation: running.id,
      };
    const ended = forNow[0];
    if (ended) {
      return {
        state: "not_evaluated",
        reason: `its last evaluation ${ended.id} ended ${ended.status}`,
        evaluation: ended.id,
      };
    }
    const older = rows.find((r) => r.status === "done");
    if (older) {
      return {
        state: "stale",
        evaluation: older.id,
        reason:
          older.dataset_version !== dataset.version
            ? `evaluated against an older dataset version (${short(older.dataset_version)}; the requirement now uses ${short(dataset.version)})`
            : "evaluated against an earlier requirement (the label's required evaluation changed since)",
      };
    }
    return { state: "not_evaluated", reason: "" };
  }
}

/** A finished evaluation of the requirement, judged against its thresholds. */
function judge(row: EvaluationRow, requirement: RequirementBody, target: string, current: string | null): GateState {
  const summary = JSON.parse(row.summary ?? "{}") as EvaluationSummary;
  const versions = summary.versions ?? [];
  const candidate = versions.find((v) => v.version === target);
  if (!candidate)
    return { state: "not_evaluated", reason: `evaluation ${row.id} has no result for it`, evaluation: row.id };
  let regressions: number | null = null;
  if (requirement.no_regression && current !== null && current !== target) {
    // The comparison must be with what the label serves now.
    const against = versions[0]?.version;
    if (against !== current || versions.length !== 2) {
      return {
        state: "stale",
        evaluation: row.id,
        reason: `evaluated against ${short(against ?? "nothing")}, but the label now serves ${short(current)}`,
      };
    }
    regressions = summary.compare?.regressions ?? 0;
  }
  const missed = missedThresholds(requirement, candidate, regressions);
  if (missed.length > 0) {
    return { state: "failed", reason: missed.join("; "), pass_rate: candidate.pass_rate, evaluation: row.id };
  }
  return { state: "passed", evaluation: row.id, pass_rate: candidate.pass_rate };
}

/** Refuses deleting a dataset while a label's required evaluation names it (the dataset service asks). */
export function datasetsInRequirements(db: Kysely<Database>) {
  return async (projectId: string, datasetId: string): Promise<string | undefined> => {
    const rows = await db
      .selectFrom("label_settings")
      .select(["name", "requirement"])
      .where("project_id", "=", projectId)
      .where("requirement", "is not", null)
      .orderBy("name")
      .execute();
    const naming = rows.filter(
      (row) => requiredDataset(JSON.parse(row.requirement as string) as RequirementBody).id === datasetId,
    );
    if (naming.length === 0) return undefined;
    const names = naming.map((r) => r.name).join(", ");
    return `dataset: ${datasetId} is what the required evaluation of label ${names} runs on; change the label's requirement first`;
  };
}
