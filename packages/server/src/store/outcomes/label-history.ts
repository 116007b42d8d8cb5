import { type ChangeEvent, isPromptEvent, type PromptEvent } from "@promptstore/core/events";
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

const PRODUCTION = "production";
const EPOCH = "1970-01-01T00:00:00.000Z";

/** What a label served from `at` on: its version (null once removed) and its rollout's candidate. */
export interface LabelState {
  at: string;
  /** `at` as epoch milliseconds, parsed once when loaded: placing compares thousands of outcomes with it. */
  atMs: number;
  version: string | null;
  candidate: string | null;
}

/** What an outcome of a prompt is checked against: whether the prompt exists, and its labels' history. */
export interface PromptPlacement {
  exists: boolean;
  /** Per label, its states oldest first, ending with what it serves now. */
  history: Map<string, LabelState[]>;
}

/** The labels a change's events moved (or whose rollout changed), and whether the prompt was deleted. */
function touched(events: readonly PromptEvent[]): { byPrompt: Map<string, Set<string>>; deleted: Set<string> } {
  const byPrompt = new Map<string, Set<string>>();
  const deleted = new Set<string>();
  const add = (promptId: string, label: string) => {
    const labels = byPrompt.get(promptId) ?? new Set<string>();
    labels.add(label);
    byPrompt.set(promptId, labels);
  };
  for (const event of events) {
    if (event.type === "prompt.deleted") {
      deleted.add(event.prompt_id);
      byPrompt.delete(event.prompt_id);
      continue;
    }
    // Production moves on a publish, and on a create that publishes (which records no prompt.published).
    if (event.type === "prompt.published" || (event.type === "prompt.created" && event.production_version !== null)) {
      add(event.prompt_id, PRODUCTION);
    }
    if (event.label !== undefined && event.type.startsWith("prompt.")) add(event.prompt_id, event.label);
  }
  return { byPrompt, deleted };
}

/**
 * What each label served when (migration 024), kept by an event sink inside every change's transaction: after a
 * change that moves a label or its rollout, the label's state is read back in that transaction and recorded
 * at the change's time. A deleted prompt's history, outcomes and fleet go with it: a prompt made again with its
 * id starts with none.
 */
export class LabelHistory {
  constructor(private readonly db: Kysely<Database>) {}

  /** The event sink: given each change's events in its transaction. */
  readonly sink = async (db: Kysely<Database>, projectId: string, changes: ChangeEvent[]): Promise<void> => {
    // A project's events (a label's requirement) serve no version: only prompt events move what labels serve.
    const events = changes.filter(isPromptEvent);
    const { byPrompt, deleted } = touched(events);
    for (const promptId of deleted) await forgetPrompt(db, projectId, promptId);
    for (const [promptId, labels] of byPrompt) {
      const at = events.filter((e) => e.prompt_id === promptId).reduce((t, e) => (e.at > t ? e.at : t), "");
      const now = (await currentStates(db, projectId, [promptId])).get(promptId) ?? new Map<string, Served>();
      const rows = [...labels].sort().map((label) => {
        const state = now.get(label);
        return {
          project_id: projectId,
          prompt_id: promptId,
          label,
          at,
          version: state?.version ?? null,
          candidate: state?.candidate ?? null,
        };
      });
      await db
        .insertInto("label_history")
        .values(rows)
        .onConflict((oc) =>
          oc.columns(["project_id", "prompt_id", "label", "at"]).doUpdateSet({
            version: sql.ref("excluded.version"),
            candidate: sql.ref("excluded.candidate"),
          }),
        )
        .execute();
    }
  };

  /**
   * Per prompt asked about (in one project): whether it exists, and its labels' history with what they serve
   * now as the last state. A few queries, however many prompts.
   */
  async placements(projectId: string, promptIds: readonly string[]): Promise<Map<string, PromptPlacement>> {
    const out = new Map<string, PromptPlacement>();
    if (promptIds.length === 0) return out;
    const ids = [...new Set(promptIds)];
    for (const id of ids) out.set(id, { exists: false, history: new Map() });
    const rows = await this.db
      .selectFrom("label_history")
      .select(["prompt_id", "label", "at", "version", "candidate"])
      .where("project_id", "=", projectId)
      .where("prompt_id", "in", ids)
      .orderBy("prompt_id")
      .orderBy("label")
      .orderBy("at")
      .execute();
    const now = await currentStates(this.db, projectId, ids);
    const newest = new Map<string, string>();
    for (const row of rows) {
      const placement = out.get(row.prompt_id) as PromptPlacement;
      const states = placement.history.get(row.label) ?? [];
      states.push({ at: row.at, atMs: Date.parse(row.at), version: row.version, candidate: row.candidate });
      placement.history.set(row.label, states);
      if (row.at > (newest.get(row.prompt_id) ?? "")) newest.set(row.prompt_id, row.at);
    }
    for (const [promptId, labels] of now) {
      const placement = out.get(promptId) as PromptPlacement;
      placement.exists = true;
      // What it serves now is the last word, whatever the history holds (a label moved by a path with no sink).
      for (const [label, state] of labels) {
        const states = placement.history.get(label) ?? [];
        const last = states[states.length - 1];
        if (last?.version !== state.version || last?.candidate !== state.candidate) {
          const at = newest.get(promptId) ?? EPOCH;
          states.push({ at, atMs: Date.parse(at), version: state.version, candidate: state.candidate });
        }
        placement.history.set(label, states);
      }
    }
    // A prompt that no longer exists keeps no history worth checking.
    for (const placement of out.values()) if (!placement.exists) placement.history.clear();
    return out;
  }

  /** Of the (prompt, hash) pairs asked about, those where the hash is a version of the prompt: `prompt\u0000hash`. */
  async heldVersions(projectId: string, pairs: readonly { promptId: string; version: string }[]): Promise<Set<string>> {
    const held = new Set<string>();
    if (pairs.length === 0) return held;
    const hashes = [...new Set(pairs.map((p) => p.version))];
    const prompts = [...new Set(pairs.map((p) => p.promptId))];
    for (let i = 0; i < hashes.length; i += 500) {
      const rows = await this.db
        .selectFrom("versions")
        .select(["prompt_id", "hash"])
        .where("project_id", "=", projectId)
        .where("prompt_id", "in", prompts)
        .where("hash", "in", hashes.slice(i, i + 500))
        .execute();
      for (const row of rows) held.add(`${row.prompt_id}\u0000${row.hash}`);
    }
    return held;
  }

  /**
   * Deletes the states that ended before `before`: a label's last state from before it stays, since it says
   * what the label served at `before`.
   */
  async prune(before: string): Promise<void> {
    await this.db
      .deleteFrom("label_history")
      .where("at", "<", before)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("label_history as later")
            .select(sql.lit(1).as("one"))
            .whereRef("later.project_id", "=", "label_history.project_id")
            .whereRef("later.prompt_id", "=", "label_history.prompt_id")
            .whereRef("later.label", "=", "label_history.label")
            .whereRef("later.at", ">", "label_history.at")
            .where("later.at", "<=", before),
        ),
      )
      .execute();
  }
}

type Served = { version: string | null; candidate: string | null };

/** Per prompt that exists, what each of its labels serves now, read in `db` (a change's transaction, or not). */
async function currentStates(
  db: Kysely<Database>,
  projectId: string,
  promptIds: readonly string[],
): Promise<Map<string, Map<string, Served>>> {
  const out = new Map<string, Map<string, Served>>();
  const prompts = await db
    .selectFrom("prompts")
    .select(["id", "production_version"])
    .where("project_id", "=", projectId)
    .where("id", "in", [...promptIds])
    .execute();
  if (prompts.length === 0) return out;
  for (const prompt of prompts) {
    const states = new Map<string, Served>();
    if (prompt.production_version !== null) {
      states.set(PRODUCTION, { version: prompt.production_version, candidate: null });
    }
    out.set(prompt.id, states);
  }
  const ids = [...out.keys()];
  const labels = await db
    .selectFrom("prompt_labels")
    .select(["prompt_id", "name", "version"])
    .where("project_id", "=", projectId)
    .where("prompt_id", "in", ids)
    .execute();
  for (const label of labels) out.get(label.prompt_id)?.set(label.name, { version: label.version, candidate: null });
  const rollouts = await db
    .selectFrom("rollouts")
    .select(["prompt_id", "label", "candidate"])
    .where("project_id", "=", projectId)
    .where("prompt_id", "in", ids)
    .execute();
  for (const rollout of rollouts) {
    const states = out.get(rollout.prompt_id);
    if (!states) continue;
    const state = states.get(rollout.label) ?? { version: null, candidate: null };
    states.set(rollout.label, { ...state, candidate: rollout.candidate });
  }
  return out;
}

/** A deleted prompt's history, outcomes and fleet, in the deletion's transaction. */
async function forgetPrompt(db: Kysely<Database>, projectId: string, promptId: string): Promise<void> {
  await db.deleteFrom("label_history").where("project_id", "=", projectId).where("prompt_id", "=", promptId).execute();
  const series = db
    .selectFrom("outcome_series")
    .select("id")
    .where("project_id", "=", projectId)
    .where("prompt_id", "=", promptId);
  await db.deleteFrom("outcome_counts").where("series_id", "in", series).execute();
  await db.deleteFrom("outcome_latency").where("series_id", "in", series).execute();
  await db.deleteFrom("outcome_series").where("project_id", "=", projectId).where("prompt_id", "=", promptId).execute();
  await db
    .deleteFrom("fleet_instances")
    .where("project_id", "=", projectId)
    .where("prompt_id", "=", promptId)
    .execute();
}
