import type { Kysely } from "kysely";
import type { Database } from "../schema.js";
import { PROMPT_COLUMNS, type PromptListSummary, type PromptRow } from "./prompt-rows.js";

/** Prompts joined to the version a pointer serves (`production` falls back to latest). */
export function servedVersions(db: Kysely<Database>, pointer: "production" | "latest") {
  return db.selectFrom("prompts as p").innerJoin("versions as v", (join) =>
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
  );
}

/** Where a prompt stands in list order: the keyset of every paged read of the list. */
export interface ListKey {
  created_at: string;
  id: string;
}

/**
 * A project's prompts after `after` (from the first when undefined), in list order: the keyset every paged read
 * of the list uses, a client's pages and the dashboard's pieces alike. A row value, not `a > x or (a = x and
 * b > y)`: both databases then seek the list's index to the key, where the OR walked it from the project's first
 * prompt (a page of 100 000 took 90 ms).
 */
export function promptsInListOrder(db: Kysely<Database>, projectId: string, after: ListKey | undefined) {
  const query = db.selectFrom("prompts").where("project_id", "=", projectId).orderBy("created_at").orderBy("id");
  return after
    ? query.where((eb) => eb(eb.refTuple("created_at", "id"), ">", eb.tuple(after.created_at, after.id)))
    : query;
}

/**
 * One project's reads for the dashboard's list beyond a page of rows: a search's names, a count and a page by
 * position, the rows of the prompts a page shows and what the list shows of each besides (service/prompts/prompt-pages.ts).
 */
export class PromptListQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly projectId: string,
  ) {}

  /**
   * The names and ids of the project's prompts in list order, `limit` after the keyset `after`: what a search
   * of the list reads, a piece at a time (service/prompts/prompt-pages.ts).
   */
  async promptNames(
    after: ListKey | undefined,
    limit: number,
  ): Promise<{ id: string; name: string; created_at: string }[]> {
    return this.keysAfter(after).select(["id", "name", "created_at"]).limit(limit).execute();
  }

  /**
   * How many prompts follow `after` in list order, counting no more than `limit`: the whole list is counted a
   * piece at a time (service/prompts/prompt-pages.ts; a full piece by the key at its end, the last by this), since one
   * count of 100 000 rows on SQLite holds the event loop for about 8 ms (a piece of 1 000: 0.2 ms).
   */
  async countAfter(after: ListKey | undefined, limit: number): Promise<number> {
    const piece = this.keysAfter(after).select("id").limit(limit);
    const row = await this.db
      .selectFrom(piece.as("piece"))
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The list key of the prompt `offset` places after `after` (0: the first after it), if there is one. */
  async keyAt(after: ListKey | undefined, offset: number): Promise<ListKey | undefined> {
    return this.keysAfter(after).select(["created_at", "id"]).limit(1).offset(offset).executeTakeFirst();
  }

  /** The ids of `limit` prompts from `offset` places after `after` in list order: a page of the unsearched list. */
  async promptIdsAt(after: ListKey | undefined, offset: number, limit: number): Promise<string[]> {
    const rows = await this.keysAfter(after).select("id").limit(limit).offset(offset).execute();
    return rows.map((r) => r.id);
  }

  private keysAfter(after: ListKey | undefined) {
    return promptsInListOrder(this.db, this.projectId, after);
  }

  /**
   * The rows of the prompts named, in the order named (a page's ids come in list order). Not ordered in SQL: on
   * a store without statistics SQLite then walked the whole list index to skip a sort of 50 rows (31 ms at
   * 100 000 prompts) instead of looking each one up by its key.
   */
  async promptsByIds(ids: readonly string[]): Promise<PromptRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom("prompts")
      .select(PROMPT_COLUMNS)
      .where("project_id", "=", this.projectId)
      .where("id", "in", ids)
      .execute();
    const position = new Map(ids.map((id, i) => [id, i]));
    return rows.sort((a, b) => (position.get(a.id) ?? 0) - (position.get(b.id) ?? 0));
  }

  /**
   * What the dashboard's list shows of each prompt besides its row: when the versions its pointers are on were
   * saved, and the variables of the version it serves (production, else latest) as stored at save; null for
   * a version saved before documents were (migration 004), whose contents `servedEnabledContents` gives. Of
   * the prompts named (one page of the list).
   */
  async listSummaries(promptIds: readonly string[]): Promise<PromptListSummary[]> {
    if (promptIds.length === 0) return [];
    const query = this.db
      .selectFrom("prompts as p")
      .innerJoin("versions as lv", (join) =>
        join
          .onRef("lv.project_id", "=", "p.project_id")
          .onRef("lv.prompt_id", "=", "p.id")
          .onRef("lv.hash", "=", "p.latest_version"),
      )
      .leftJoin("versions as pv", (join) =>
        join
          .onRef("pv.project_id", "=", "p.project_id")
          .onRef("pv.prompt_id", "=", "p.id")
          .onRef("pv.hash", "=", "p.production_version"),
      )
      .select((eb) => [
        "p.id",
        "pv.created_at as production_saved_at",
        "lv.created_at as latest_saved_at",
        eb
          .case()
          .when("p.production_version", "is", null)
          .then(eb.ref("lv.variables_json"))
          .else(eb.ref("pv.variables_json"))
          .end()
          .as("variables_json"),
      ])
      .where("p.project_id", "=", this.projectId);
    return query.where("p.id", "in", promptIds).execute();
  }

  /**
   * The enabled section contents of each prompt's served version (production, else latest), in order: of
   * the prompts named.
   */
  async servedEnabledContents(promptIds: readonly string[]): Promise<{ prompt_id: string; content: string }[]> {
    if (promptIds.length === 0) return [];
    return servedVersions(this.db, "production")
      .innerJoin("version_sections as s", (join) =>
        join
          .onRef("s.project_id", "=", "v.project_id")
          .onRef("s.prompt_id", "=", "v.prompt_id")
          .onRef("s.hash", "=", "v.hash"),
      )
      .select(["p.id as prompt_id", "s.content"])
      .where("p.project_id", "=", this.projectId)
      .where("s.enabled", "=", 1)
      .where("p.id", "in", promptIds)
      .orderBy("p.id")
      .orderBy("s.position")
      .execute();
  }
}
