import type { Change } from "@promptstore/core/change";
import type { ChangeEvent } from "@promptstore/core/events";
import type { ModelSettings, Tool } from "@promptstore/core/prompts/content";
import type { Kysely } from "kysely";
import { type NewAuditEntry, recordAudit } from "../audit.js";
import type { Announcement, ChangeChannel } from "../change-channel.js";
import type { CompiledQueries } from "../compiled-queries.js";
import type { EventStore, NewEvent, NewProjectEvent } from "../events.js";
import { lockRow } from "../row-lock.js";
import type { Database } from "../schema.js";
import { IncludeStore } from "./includes.js";
import { LabelStore } from "./labels.js";
import { type ListKey, PromptListQueries, promptsInListOrder, servedVersions } from "./prompt-list-queries.js";
import {
  documentColumns,
  documentOf,
  type NewVersion,
  PROMPT_COLUMNS,
  type PromptAndVersion,
  type PromptRow,
  promptOf,
  READ_COLUMNS,
  toSection,
  type VersionContent,
  type VersionDocument,
  type VersionRow,
} from "./prompt-rows.js";

/** Given each change's events inside its transaction, with the transaction's connection. */
export type EventSink = (db: Kysely<Database>, projectId: string, events: ChangeEvent[]) => Promise<void>;

/**
 * Every prompt query of one project. The project id is fixed at construction and every statement
 * filters by it, so code above the store cannot reach another project's rows by mistake.
 */
export class ProjectStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly queries: CompiledQueries,
    private readonly channel: ChangeChannel,
    private readonly events: EventStore,
    readonly projectId: string,
    /** Within a transaction: what it announced, delivered once it commits. */
    private readonly announced?: Announcement[],
  ) {}

  /** This store's connection (inside a transaction, the transaction's): for another domain's store to read in it. */
  connection(): Kysely<Database> {
    return this.db;
  }

  /** The labels, label settings, rollouts and release requests of the project, on this store's connection. */
  labels(): LabelStore {
    return new LabelStore(this.db, this.projectId);
  }

  /** The pins of versions and the graph they make (includes.ts), on this store's connection. */
  includes(): IncludeStore {
    return new IncludeStore(this.db, this.projectId);
  }

  /** What the dashboard's list and its search read beyond a page of rows (prompt-list-queries.ts). */
  lists(): PromptListQueries {
    return new PromptListQueries(this.db, this.projectId);
  }

  /**
   * Runs `work` in one transaction, handing it a ProjectStore bound to that transaction. Resolves only once
   * it has committed and the other instances have dropped what it announced (or their deadline passed), so
   * the write that answers next is followed by no stale read. Waiting here rather than in each mutation
   * means none can forget to.
   */
  async transaction<T>(work: (tx: ProjectStore) => Promise<T>): Promise<T> {
    const announced: Announcement[] = [];
    let result: T;
    try {
      result = await this.db
        .transaction()
        .execute((trx) =>
          work(new ProjectStore(trx, this.queries, this.channel, this.events, this.projectId, announced)),
        );
    } catch (error) {
      for (const announcement of announced) announcement.withdraw();
      throw error;
    }
    if (announced.length > 0) await Promise.all(announced.map((announcement) => announcement.delivered()));
    return result;
  }

  /**
   * Records change events in the current transaction and hands them, with their ids, to the sinks (webhook
   * deliveries), in the same transaction: an event is kept exactly when its change is.
   */
  async recordEvents(events: (NewEvent | NewProjectEvent)[], sinks: readonly EventSink[]): Promise<ChangeEvent[]> {
    const recorded = await this.events.append(this.db, this.projectId, events);
    if (recorded.length > 0) for (const sink of sinks) await sink(this.db, this.projectId, recorded);
    return recorded;
  }

  /** Writes audit rows with this store's connection: inside a transaction, they are kept exactly when it is. */
  async recordAudit(entries: NewAuditEntry[]): Promise<void> {
    await recordAudit(this.db, entries);
  }

  /** Tells other instances that this prompt changed, when (and only if) the current transaction commits. */
  async announceChange(promptId: string): Promise<void> {
    await this.announce({ kind: "prompt", projectId: this.projectId, promptId });
  }

  /** Tells other instances that this project has an event about no one prompt, once the transaction commits. */
  async announceEvents(): Promise<void> {
    await this.announce({ kind: "events", projectId: this.projectId });
  }

  private async announce(change: Change): Promise<void> {
    const announcement = await this.channel.announce(this.db, change);
    if (!announcement) return;
    // Outside a transaction the change is already committed.
    if (this.announced) this.announced.push(announcement);
    else await announcement.delivered();
  }

  async listPrompts(page: { limit?: number; after?: ListKey }): Promise<PromptRow[]> {
    const query = promptsInListOrder(this.db, this.projectId, page.after).select(PROMPT_COLUMNS);
    return (page.limit === undefined ? query : query.limit(page.limit)).execute();
  }

  /** Takes the prompt row's write lock for the rest of the transaction (row-lock.ts says how, and why so). */
  async lockPrompt(promptId: string): Promise<void> {
    await lockRow(this.db, "prompts", { project_id: this.projectId, id: promptId });
  }

  async getPrompt(promptId: string): Promise<PromptRow | undefined> {
    return this.db
      .selectFrom("prompts")
      .select(PROMPT_COLUMNS)
      .where("project_id", "=", this.projectId)
      .where("id", "=", promptId)
      .executeTakeFirst();
  }

  /** Up to two hashes of the prompt starting with `prefix`: enough to tell unique from ambiguous. */
  async findHashesByPrefix(promptId: string, prefix: string): Promise<string[]> {
    // A range instead of LIKE: uses the primary key in both dialects, and hashes are lowercase hex.
    const rows = await this.db
      .selectFrom("versions")
      .select("hash")
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", ">=", prefix)
      .where("hash", "<", `${prefix}g`)
      .orderBy("hash")
      .limit(2)
      .execute();
    return rows.map((r) => r.hash);
  }

  /** Whether the prompt holds the version with exactly this hash: what a label may point to. */
  async holdsVersion(promptId: string, hash: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("versions")
      .select("hash")
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The content of one version, from its own rows: what its document is computed from. */
  async getVersionContent(promptId: string, hash: string): Promise<VersionContent> {
    const sections = await this.db
      .selectFrom("version_sections")
      .select(["section_id", "title", "content", "enabled"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .orderBy("position")
      .execute();
    const version = await this.db
      .selectFrom("versions")
      .select("model")
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .executeTakeFirst();
    const content: VersionContent = { sections: sections.map(toSection), tools: await this.getTools(promptId, hash) };
    if (version?.model) content.model = JSON.parse(version.model) as ModelSettings;
    const pins = await this.includes().pinsOf(promptId, hash);
    if (pins.length > 0) content.includes = Object.fromEntries(pins.map((p) => [p.reference, p.included_hash]));
    return content;
  }

  /** Stores the document of a version saved before documents were; a version that has one keeps it. */
  async saveDocument(promptId: string, hash: string, document: VersionDocument): Promise<void> {
    // The model and includes columns are the version's content, written once with it; a document never
    // rewrites them.
    const { model: _model, includes_json: _includes, ...columns } = documentColumns(document);
    await this.db
      .updateTable("versions")
      .set(columns)
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .where("sections_json", "is", null)
      .execute();
  }

  /**
   * The read path: the prompt and the document of the version a pointer names (`production` falls back
   * to latest), one row of one compiled query.
   */
  async readPointer(promptId: string, pointer: "production" | "latest"): Promise<PromptAndVersion | undefined> {
    const labels = this.queries.operations.labelColumns();
    const rows = await this.queries.rows(
      this.db,
      `readPointer:${pointer}`,
      (param) =>
        servedVersions(this.db, pointer)
          .select(READ_COLUMNS)
          .select([labels.labels.as("labels_json"), labels.rollouts.as("rollouts_json")])
          .where("p.project_id", "=", param(0))
          .where("p.id", "=", param(1)),
      [this.projectId, promptId],
    );
    const row = rows[0];
    return (
      row && {
        prompt: promptOf(row),
        version: { hash: row.hash, document: documentOf(row) },
        labelsJson: row.labels_json,
        rolloutsJson: row.rollouts_json,
      }
    );
  }

  /**
   * The prompt and the document of one of its versions by full hash, in one query; `version` is
   * undefined when the prompt exists but has no such version.
   */
  async readVersion(
    promptId: string,
    hash: string,
  ): Promise<(Omit<PromptAndVersion, "version"> & { version: PromptAndVersion["version"] | undefined }) | undefined> {
    const labels = this.queries.operations.labelColumns();
    const rows = await this.queries.rows(
      this.db,
      "readVersion",
      (param) =>
        this.db
          .selectFrom("prompts as p")
          .leftJoin("versions as v", (join) =>
            join
              .onRef("v.project_id", "=", "p.project_id")
              .onRef("v.prompt_id", "=", "p.id")
              .on("v.hash", "=", param(2)),
          )
          .select(READ_COLUMNS)
          .select([labels.labels.as("labels_json"), labels.rollouts.as("rollouts_json")])
          .where("p.project_id", "=", param(0))
          .where("p.id", "=", param(1)),
      [this.projectId, promptId, hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      prompt: promptOf(row),
      version: row.hash === null ? undefined : { hash: row.hash, document: documentOf(row) },
      labelsJson: row.labels_json,
      rolloutsJson: row.rollouts_json,
    };
  }

  private async getTools(promptId: string, hash: string): Promise<Tool[]> {
    const rows = await this.db
      .selectFrom("version_tools")
      .select("definition")
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .orderBy("position")
      .execute();
    return rows.map((t) => JSON.parse(t.definition) as Tool);
  }

  async listVersions(promptId: string): Promise<VersionRow[]> {
    return this.db
      .selectFrom("versions")
      .select(["hash", "message", "created_at", "saved_by"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .orderBy("created_at", "desc")
      .orderBy("hash")
      .execute();
  }

  /**
   * Takes one of the plan's prompt slots, or returns false when none is left. A single conditional
   * UPDATE, so concurrent creates cannot both pass the check (the row lock serializes them).
   */
  async reservePromptSlot(limit: number | null): Promise<boolean> {
    let query = this.db
      .updateTable("projects")
      .set((eb) => ({ prompt_count: eb("prompt_count", "+", 1) }))
      .where("id", "=", this.projectId);
    if (limit !== null) query = query.where("prompt_count", "<", limit);
    const result = await query.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Gives back one of the plan's prompt slots (a deletion). It also takes the project row's lock, which a
   * create takes first too: a deletion that takes it before the prompt's own lock cannot deadlock with a
   * create that reuses the id.
   */
  async releasePromptSlot(): Promise<void> {
    await this.db
      .updateTable("projects")
      .set((eb) => ({ prompt_count: eb("prompt_count", "-", 1) }))
      .where("id", "=", this.projectId)
      .where("prompt_count", ">", 0)
      .execute();
  }

  /**
   * Deletes the prompt with every version, section and tool row of it, children first (the foreign keys
   * point up). The events log and webhook deliveries keep their rows: they are history. Returns whether the
   * prompt was there.
   */
  async deletePrompt(promptId: string): Promise<boolean> {
    for (const table of ["version_includes", "version_tools", "version_sections", "versions"] as const) {
      await this.db
        .deleteFrom(table)
        .where("project_id", "=", this.projectId)
        .where("prompt_id", "=", promptId)
        .execute();
    }
    const result = await this.db
      .deleteFrom("prompts")
      .where("project_id", "=", this.projectId)
      .where("id", "=", promptId)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Inserts unless the id is taken; returns whether it was inserted. */
  async insertPrompt(row: PromptRow): Promise<boolean> {
    const result = await this.db
      .insertInto("prompts")
      .values({ ...row, project_id: this.projectId })
      .onConflict((oc) => oc.columns(["project_id", "id"]).doNothing())
      .executeTakeFirst();
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }

  async promptIdsStartingWith(base: string): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom("prompts")
      .select("id")
      .where("project_id", "=", this.projectId)
      .where("id", ">=", base)
      .where("id", "<", `${base}\u{10FFFF}`)
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  async updatePrompt(
    promptId: string,
    patch: Partial<Pick<PromptRow, "name" | "description" | "production_version" | "latest_version" | "updated_at">>,
  ): Promise<void> {
    await this.db
      .updateTable("prompts")
      .set(patch)
      .where("project_id", "=", this.projectId)
      .where("id", "=", promptId)
      .execute();
  }

  /**
   * Inserts a version with its sections and tools unless the prompt already has one with this hash.
   * Returns whether it was created; the primary key settles concurrent saves of the same content.
   */
  async insertVersion(promptId: string, version: NewVersion): Promise<boolean> {
    const key = { project_id: this.projectId, prompt_id: promptId, hash: version.hash };
    const result = await this.db
      .insertInto("versions")
      .values({
        ...key,
        message: version.message,
        tool_count: version.content.tools.length,
        created_at: version.created_at,
        saved_by: version.saved_by,
        ...documentColumns(version.document),
        include_depth: version.includes?.depth ?? null,
        included_prompts: version.includes ? JSON.stringify(version.includes.prompts) : null,
      })
      .onConflict((oc) => oc.columns(["project_id", "prompt_id", "hash"]).doNothing())
      .executeTakeFirst();
    if ((result.numInsertedOrUpdatedRows ?? 0n) === 0n) return false;

    await this.db
      .insertInto("version_sections")
      .values(
        version.sections.map((s, position) => ({
          ...key,
          position,
          section_id: s.id,
          title: s.title,
          content: s.content,
          enabled: s.enabled ? 1 : 0,
        })),
      )
      .execute();
    if (version.content.tools.length > 0) {
      await this.db
        .insertInto("version_tools")
        .values(
          version.content.tools.map((tool, position) => ({
            ...key,
            position,
            name: tool.function.name,
            definition: JSON.stringify(tool),
          })),
        )
        .execute();
    }
    if (version.includes !== undefined) await this.includes().insertPins(promptId, version.hash, version.includes);
    return true;
  }
}
