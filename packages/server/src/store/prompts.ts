import type { Content, SectionWithId, Tool } from "@promptstore/core/content";
import type { Kysely } from "kysely";
import type { ChangeChannel } from "./change-channel.js";
import type { CompiledQueries } from "./compiled-queries.js";
import type { Database, PromptsTable } from "./schema.js";

export type PromptRow = Omit<PromptsTable, "project_id">;

export interface VersionRow {
  hash: string;
  message: string | null;
  created_at: string;
  saved_by: string | null;
}

export interface StoredVersion extends Omit<VersionRow, "saved_by"> {
  sections: SectionWithId[];
  tools: Tool[];
}

const PROMPT_COLUMNS = [
  "id",
  "name",
  "description",
  "production_version",
  "latest_version",
  "created_at",
  "updated_at",
] as const;

const toSection = (row: { section_id: string; title: string; content: string; enabled: number }): SectionWithId => ({
  id: row.section_id,
  title: row.title,
  content: row.content,
  enabled: Boolean(row.enabled),
});

/**
 * Every prompt query of one project. The project id is fixed at construction and every statement
 * filters by it, so code above the store cannot reach another project's rows by mistake.
 */
export class ProjectStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly queries: CompiledQueries,
    private readonly channel: ChangeChannel,
    readonly projectId: string,
  ) {}

  /** Runs `work` in one transaction, handing it a ProjectStore bound to that transaction. */
  transaction<T>(work: (tx: ProjectStore) => Promise<T>): Promise<T> {
    return this.db
      .transaction()
      .execute((trx) => work(new ProjectStore(trx, this.queries, this.channel, this.projectId)));
  }

  /** Tells other instances that this prompt changed, when (and only if) the current transaction commits. */
  announceChange(promptId: string): Promise<void> {
    return this.channel.announce(this.db, { kind: "prompt", projectId: this.projectId, promptId });
  }

  async listPrompts(page: { limit?: number; after?: { created_at: string; id: string } }): Promise<PromptRow[]> {
    let query = this.db
      .selectFrom("prompts")
      .select(PROMPT_COLUMNS)
      .where("project_id", "=", this.projectId)
      .orderBy("created_at")
      .orderBy("id");
    const { after, limit } = page;
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb("created_at", ">", after.created_at),
          eb.and([eb("created_at", "=", after.created_at), eb("id", ">", after.id)]),
        ]),
      );
    }
    if (limit !== undefined) query = query.limit(limit);
    return query.execute();
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

  async getVersion(promptId: string, hash: string): Promise<StoredVersion | undefined> {
    const version = await this.db
      .selectFrom("versions")
      .select(["hash", "message", "tool_count", "created_at"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .executeTakeFirst();
    if (!version) return undefined;
    const sections = await this.db
      .selectFrom("version_sections")
      .select(["section_id", "title", "content", "enabled"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .orderBy("position")
      .execute();
    return {
      hash: version.hash,
      message: version.message,
      created_at: version.created_at,
      sections: sections.map(toSection),
      tools: version.tool_count > 0 ? await this.getTools(promptId, hash) : [],
    };
  }

  /**
   * The read path in one query: the prompt, the version a pointer names (`production` falls back to
   * latest) and its sections; tools only when the version has any.
   */
  async readPointer(
    promptId: string,
    pointer: "production" | "latest",
  ): Promise<{ prompt: PromptRow; version: StoredVersion } | undefined> {
    const rows = await this.queries.rows(
      this.db,
      `readPointer:${pointer}`,
      (param) =>
        this.servedSections(pointer)
          .select([
            "p.id",
            "p.name",
            "p.description",
            "p.production_version",
            "p.latest_version",
            "p.created_at",
            "p.updated_at",
            "v.hash",
            "v.message",
            "v.tool_count",
            "v.created_at as version_created_at",
            "s.section_id",
            "s.title",
            "s.content",
            "s.enabled",
          ])
          .where("p.project_id", "=", param(0))
          .where("p.id", "=", param(1))
          .orderBy("s.position"),
      [this.projectId, promptId],
    );
    const first = rows[0];
    if (!first) return undefined;
    const prompt: PromptRow = {
      id: first.id,
      name: first.name,
      description: first.description,
      production_version: first.production_version,
      latest_version: first.latest_version,
      created_at: first.created_at,
      updated_at: first.updated_at,
    };
    const version: StoredVersion = {
      hash: first.hash,
      message: first.message,
      created_at: first.version_created_at,
      sections: rows.map(toSection),
      tools: first.tool_count > 0 ? await this.getTools(promptId, first.hash) : [],
    };
    return { prompt, version };
  }

  /** Prompts joined to the version a pointer serves and to that version's sections. */
  private servedSections(pointer: "production" | "latest") {
    return this.db
      .selectFrom("prompts as p")
      .innerJoin("versions as v", (join) =>
        join
          .onRef("v.project_id", "=", "p.project_id")
          .onRef("v.prompt_id", "=", "p.id")
          .on((eb) =>
            eb(
              "v.hash",
              "=",
              pointer === "production"
                ? eb.fn.coalesce("p.production_version", "p.latest_version")
                : eb.ref("p.latest_version"),
            ),
          ),
      )
      .innerJoin("version_sections as s", (join) =>
        join
          .onRef("s.project_id", "=", "v.project_id")
          .onRef("s.prompt_id", "=", "v.prompt_id")
          .onRef("s.hash", "=", "v.hash"),
      );
  }

  /** The enabled section contents of every prompt's served version (production, else latest), in order. */
  async servedEnabledContents(): Promise<{ prompt_id: string; content: string }[]> {
    return this.servedSections("production")
      .select(["p.id as prompt_id", "s.content"])
      .where("p.project_id", "=", this.projectId)
      .where("s.enabled", "=", 1)
      .orderBy("p.id")
      .orderBy("s.position")
      .execute();
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
  async insertVersion(
    promptId: string,
    version: {
      hash: string;
      message: string | null;
      created_at: string;
      saved_by: string;
      content: Content;
      sections: SectionWithId[];
    },
  ): Promise<boolean> {
    const key = { project_id: this.projectId, prompt_id: promptId, hash: version.hash };
    const result = await this.db
      .insertInto("versions")
      .values({
        ...key,
        message: version.message,
        tool_count: version.content.tools.length,
        created_at: version.created_at,
        saved_by: version.saved_by,
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
    return true;
  }
}
