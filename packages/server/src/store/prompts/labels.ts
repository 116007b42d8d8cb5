import type { Kysely } from "kysely";
import { lockRow } from "../row-lock.js";
import type { Database, ReleaseRequestsTable } from "../schema.js";

export interface LabelSettings {
  name: string;
  description: string;
  protected: boolean;
  fallback: string | null;
  updated_at: string;
  /** The required evaluation's JSON (docs/evaluations.md), or null; and its hash. */
  requirement: string | null;
  requirement_hash: string | null;
  /** A rollback to a version this label served before passes its gate. */
  rollback_allowed: boolean;
}

const SETTINGS_COLUMNS = [
  "name",
  "description",
  "protected",
  "fallback",
  "updated_at",
  "requirement",
  "requirement_hash",
  "rollback_allowed",
] as const;

function toSettings(row: {
  name: string;
  description: string;
  protected: number;
  fallback: string | null;
  updated_at: string;
  requirement: string | null;
  requirement_hash: string | null;
  rollback_allowed: number;
}): LabelSettings {
  return { ...row, protected: row.protected === 1, rollback_allowed: row.rollback_allowed === 1 };
}

export interface Rollout {
  label: string;
  candidate: string;
  percent: number;
  started_at: string;
}

export type ReleaseRow = Omit<ReleaseRequestsTable, "project_id">;

/**
 * The labels of one project's prompts (all but production, which is `prompts.production_version`), their
 * per-project settings, rollouts and release requests. Bound to a project like ProjectStore, and to the
 * connection it is given: inside a transaction, everything it writes is kept exactly when that is.
 */
export class LabelStore {
  constructor(
    private readonly db: Kysely<Database>,
    readonly projectId: string,
  ) {}

  /** A prompt's labels (production not among them), by name. */
  async labelsOf(promptId: string): Promise<Map<string, string>> {
    const rows = await this.db
      .selectFrom("prompt_labels")
      .select(["name", "version"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .orderBy("name")
      .execute();
    return new Map(rows.map((r) => [r.name, r.version]));
  }

  /** The labels of some prompts (production not among them), by prompt and name: one page of a list. */
  async labelsOfPrompts(promptIds: readonly string[]): Promise<{ prompt_id: string; name: string; version: string }[]> {
    if (promptIds.length === 0) return [];
    return this.db
      .selectFrom("prompt_labels")
      .select(["prompt_id", "name", "version"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "in", promptIds)
      .orderBy("prompt_id")
      .orderBy("name")
      .execute();
  }

  /** The names of the labels any prompt of the project carries (production not among them), by name. */
  async namesInUse(): Promise<string[]> {
    const rows = await this.db
      .selectFrom("prompt_labels")
      .select("name")
      .distinct()
      .where("project_id", "=", this.projectId)
      .orderBy("name")
      .execute();
    return rows.map((r) => r.name);
  }

  /** Every label of every prompt of the project (production not among them). */
  async allLabels(): Promise<{ prompt_id: string; name: string; version: string }[]> {
    return this.db
      .selectFrom("prompt_labels")
      .select(["prompt_id", "name", "version"])
      .where("project_id", "=", this.projectId)
      .orderBy("prompt_id")
      .orderBy("name")
      .execute();
  }

  /** How many of the project's prompts are published: the prompts production labels. */
  async publishedCount(): Promise<number> {
    const row = await this.db
      .selectFrom("prompts")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("project_id", "=", this.projectId)
      .where("production_version", "is not", null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async setLabel(promptId: string, name: string, version: string, at: string): Promise<void> {
    await this.db
      .insertInto("prompt_labels")
      .values({ project_id: this.projectId, prompt_id: promptId, name, version, updated_at: at })
      .onConflict((oc) => oc.columns(["project_id", "prompt_id", "name"]).doUpdateSet({ version, updated_at: at }))
      .execute();
  }

  async removeLabel(promptId: string, name: string): Promise<void> {
    await this.db
      .deleteFrom("prompt_labels")
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("name", "=", name)
      .execute();
  }

  /** Whether the project knows the name: some prompt carries it, or it has settings. */
  async projectKnows(name: string): Promise<boolean> {
    const used = await this.db
      .selectFrom("prompt_labels")
      .select("name")
      .where("project_id", "=", this.projectId)
      .where("name", "=", name)
      .limit(1)
      .executeTakeFirst();
    return used !== undefined || (await this.settingsOf(name)) !== undefined;
  }

  /**
   * Serializes changes of the project's label settings (the project row's lock, which a create also takes
   * first): a rule between two labels' settings is checked against what the other change committed.
   */
  async lockSettings(): Promise<void> {
    await lockRow(this.db, "projects", { id: this.projectId });
  }

  async settingsOf(name: string): Promise<LabelSettings | undefined> {
    const row = await this.db
      .selectFrom("label_settings")
      .select(SETTINGS_COLUMNS)
      .where("project_id", "=", this.projectId)
      .where("name", "=", name)
      .executeTakeFirst();
    return row && toSettings(row);
  }

  async allSettings(): Promise<LabelSettings[]> {
    const rows = await this.db
      .selectFrom("label_settings")
      .select(SETTINGS_COLUMNS)
      .where("project_id", "=", this.projectId)
      .orderBy("name")
      .execute();
    return rows.map(toSettings);
  }

  async saveSettings(settings: LabelSettings): Promise<void> {
    const values = {
      description: settings.description,
      protected: settings.protected ? 1 : 0,
      fallback: settings.fallback,
      updated_at: settings.updated_at,
      requirement: settings.requirement,
      requirement_hash: settings.requirement_hash,
      rollback_allowed: settings.rollback_allowed ? 1 : 0,
    };
    await this.db
      .insertInto("label_settings")
      .values({ project_id: this.projectId, name: settings.name, ...values })
      .onConflict((oc) => oc.columns(["project_id", "name"]).doUpdateSet(values))
      .execute();
  }

  /** The names of every protected label of the project. */
  async protectedNames(): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom("label_settings")
      .select("name")
      .where("project_id", "=", this.projectId)
      .where("protected", "=", 1)
      .execute();
    return new Set(rows.map((r) => r.name));
  }

  async rolloutsOf(promptId: string): Promise<Map<string, Rollout>> {
    const rows = await this.db
      .selectFrom("rollouts")
      .select(["label", "candidate", "percent", "started_at"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .execute();
    return new Map(rows.map((r) => [r.label, r]));
  }

  async setRollout(promptId: string, rollout: Rollout): Promise<void> {
    const { label, candidate, percent, started_at } = rollout;
    await this.db
      .insertInto("rollouts")
      .values({ project_id: this.projectId, prompt_id: promptId, label, candidate, percent, started_at })
      .onConflict((oc) => oc.columns(["project_id", "prompt_id", "label"]).doUpdateSet({ candidate, percent }))
      .execute();
  }

  async clearRollout(promptId: string, label: string): Promise<void> {
    await this.db
      .deleteFrom("rollouts")
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("label", "=", label)
      .execute();
  }

  async insertRelease(row: ReleaseRow): Promise<void> {
    await this.db
      .insertInto("release_requests")
      .values({ ...row, project_id: this.projectId })
      .execute();
  }

  /**
   * Who created the project's key that acts as `key:<prefix>`: the actor of its `key.created` audit row,
   * written in the key's own transaction (keys keep no other record of it). Several when keys share a prefix.
   */
  async keyCreators(prefix: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom("api_keys as k")
      .innerJoin("audit_log as a", (join) =>
        join
          .onRef("a.target", "=", "k.id")
          .onRef("a.project_id", "=", "k.project_id")
          .on("a.action", "=", "key.created"),
      )
      .select("a.actor")
      .where("k.project_id", "=", this.projectId)
      .where("k.prefix", "=", prefix)
      .execute();
    return rows.map((row) => row.actor);
  }

  async getRelease(id: string): Promise<ReleaseRow | undefined> {
    return this.db
      .selectFrom("release_requests")
      .selectAll()
      .where("project_id", "=", this.projectId)
      .where("id", "=", id)
      .executeTakeFirst()
      .then((row) => row && withoutProject(row));
  }

  async listReleases(status: string | undefined, limit: number): Promise<ReleaseRow[]> {
    let query = this.db
      .selectFrom("release_requests")
      .selectAll()
      .where("project_id", "=", this.projectId)
      .orderBy("requested_at", "desc")
      .orderBy("id")
      .limit(limit);
    if (status !== undefined) query = query.where("status", "=", status);
    return (await query.execute()).map(withoutProject);
  }

  /**
   * Decides a pending request: only one decision can win (the update is conditional on `pending`), so two
   * approvals racing move the label once. Returns whether this one won.
   */
  async decideRelease(
    id: string,
    decision: { status: string; decided_by: string; decided_at: string; comment: string | null },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable("release_requests")
      .set(decision)
      .where("project_id", "=", this.projectId)
      .where("id", "=", id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Cancels every pending request of a prompt (it is being deleted): returns the requests as they were, so
   * that each is recorded. The caller holds the prompt's row lock.
   */
  async cancelPendingReleases(
    promptId: string,
    decision: { decided_by: string; decided_at: string; comment: string | null },
  ): Promise<ReleaseRow[]> {
    const pending = await this.db
      .selectFrom("release_requests")
      .selectAll()
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("status", "=", "pending")
      .orderBy("requested_at")
      .orderBy("id")
      .execute();
    if (pending.length === 0) return [];
    await this.db
      .updateTable("release_requests")
      .set({ ...decision, status: "cancelled" })
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("status", "=", "pending")
      .execute();
    return pending.map(withoutProject);
  }
}

function withoutProject(row: ReleaseRequestsTable): ReleaseRow {
  const { project_id: _, ...rest } = row;
  return rest;
}
