import type { Kysely, Selectable } from "kysely";
import { lockRow } from "./row-lock.js";
import type { Database, ExampleResultsTable, ModelConnectionsTable, PromptExamplesTable } from "./schema.js";

export type ConnectionRow = Selectable<ModelConnectionsTable>;
export type ExampleRow = Selectable<PromptExamplesTable>;
export type ResultRow = Selectable<ExampleResultsTable>;

/** Connections, examples and kept results. Every query names its project: another project's is not found. */
export class PlaygroundStore {
  constructor(readonly db: Kysely<Database>) {}

  listConnections(projectId: string): Promise<ConnectionRow[]> {
    return this.db
      .selectFrom("model_connections")
      .selectAll()
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  }

  findConnection(projectId: string, id: string): Promise<ConnectionRow | undefined> {
    return this.db
      .selectFrom("model_connections")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** The project of a connection, for the operator's CLI, which names one by its id alone. */
  async projectOfConnection(id: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("model_connections")
      .select("project_id")
      .where("id", "=", id)
      .executeTakeFirst();
    return row?.project_id;
  }

  /** Inserts unless the project already has `cap`; returns whether it did. */
  async createConnection(row: ConnectionRow, cap: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, "projects", { id: row.project_id });
      const counted = await trx
        .selectFrom("model_connections")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("project_id", "=", row.project_id)
        .executeTakeFirstOrThrow();
      if (Number(counted.n) >= cap) return false;
      await trx.insertInto("model_connections").values(row).execute();
      return true;
    });
  }

  async updateConnection(
    projectId: string,
    id: string,
    patch: Partial<Pick<ConnectionRow, "name" | "base_url" | "api_key" | "models">>,
    at: string,
    fromBaseUrl?: string,
  ): Promise<boolean> {
    let query = this.db
      .updateTable("model_connections")
      .set({ ...patch, updated_at: at })
      .where("project_id", "=", projectId)
      .where("id", "=", id);
    // Conditional on the address the caller checked its change against (its key stays with that address).
    if (fromBaseUrl !== undefined) query = query.where("base_url", "=", fromBaseUrl);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async removeConnection(projectId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("model_connections")
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  listExamples(projectId: string, promptId: string): Promise<ExampleRow[]> {
    return this.db
      .selectFrom("prompt_examples")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  }

  findExample(projectId: string, promptId: string, id: string): Promise<ExampleRow | undefined> {
    return this.db
      .selectFrom("prompt_examples")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** Inserts unless the prompt already has `cap` examples; returns whether it did. */
  async createExample(row: ExampleRow, cap: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, "prompts", { project_id: row.project_id, id: row.prompt_id });
      const counted = await trx
        .selectFrom("prompt_examples")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("project_id", "=", row.project_id)
        .where("prompt_id", "=", row.prompt_id)
        .executeTakeFirstOrThrow();
      if (Number(counted.n) >= cap) return false;
      await trx.insertInto("prompt_examples").values(row).execute();
      return true;
    });
  }

  /** Updates the example; when its inputs changed, its kept results go in the same transaction. */
  async updateExample(
    projectId: string,
    promptId: string,
    id: string,
    patch: Partial<Pick<ExampleRow, "name" | "variables" | "messages" | "good_answer">>,
    at: string,
    dropResults: boolean,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("prompt_examples")
        .set({ ...patch, updated_at: at })
        .where("project_id", "=", projectId)
        .where("prompt_id", "=", promptId)
        .where("id", "=", id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      if (dropResults) await trx.deleteFrom("example_results").where("example_id", "=", id).execute();
      return true;
    });
  }

  async removeExample(projectId: string, promptId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom("prompt_examples")
        .select("id")
        .where("project_id", "=", projectId)
        .where("prompt_id", "=", promptId)
        .where("id", "=", id)
        .executeTakeFirst();
      if (!found) return false;
      await trx.deleteFrom("example_results").where("example_id", "=", id).execute();
      await trx.deleteFrom("prompt_examples").where("id", "=", id).execute();
      return true;
    });
  }

  /**
   * Imports examples (an id already the prompt's is updated; one another prompt holds, as when a project is
   * copied within one server, gets `newId()` and its results follow it) and results (kept where none is
   * for their key), in one transaction.
   */
  async importExamples(
    projectId: string,
    promptId: string,
    examples: ExampleRow[],
    results: ResultRow[],
    newId: () => string,
  ): Promise<{ examples: number; results: number }> {
    return this.db.transaction().execute(async (trx) => {
      let exampleCount = 0;
      const renamed = new Map<string, string>();
      for (const given of examples) {
        let row = given;
        const existing = await trx
          .selectFrom("prompt_examples")
          .select(["project_id", "prompt_id"])
          .where("id", "=", row.id)
          .executeTakeFirst();
        if (existing && (existing.project_id !== projectId || existing.prompt_id !== promptId)) {
          row = { ...row, id: newId() };
          renamed.set(given.id, row.id);
          await trx.insertInto("prompt_examples").values(row).execute();
        } else if (existing) {
          const { id, project_id, prompt_id, created_at, ...rest } = row;
          await trx.updateTable("prompt_examples").set(rest).where("id", "=", id).execute();
        } else {
          await trx.insertInto("prompt_examples").values(row).execute();
        }
        exampleCount++;
      }
      let resultCount = 0;
      for (const given of results) {
        const row = { ...given, example_id: renamed.get(given.example_id) ?? given.example_id };
        const inserted = await trx
          .insertInto("example_results")
          .values(row)
          .onConflict((oc) => oc.columns(["example_id", "version", "settings_hash"]).doNothing())
          .executeTakeFirst();
        resultCount += Number(inserted.numInsertedOrUpdatedRows ?? 0n);
      }
      return { examples: exampleCount, results: resultCount };
    });
  }

  /**
   * The result kept for this key from a run on this server. An imported one is never found here: this server
   * did not produce it, so it cannot stand in for a run (Run all) or, later, an evaluation.
   */
  findResult(exampleId: string, version: string, settingsHash: string): Promise<ResultRow | undefined> {
    return this.db
      .selectFrom("example_results")
      .selectAll()
      .where("example_id", "=", exampleId)
      .where("version", "=", version)
      .where("settings_hash", "=", settingsHash)
      .where("imported", "=", 0)
      .executeTakeFirst();
  }

  /** Keeps a result, replacing one of the same key (a fresh run, or a run where only an imported one was). */
  async keepResult(row: ResultRow): Promise<void> {
    await this.db
      .insertInto("example_results")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["example_id", "version", "settings_hash"]).doUpdateSet({
          settings: row.settings,
          answer: row.answer,
          finish_reason: row.finish_reason,
          usage: row.usage,
          ttft_ms: row.ttft_ms,
          total_ms: row.total_ms,
          ran_at: row.ran_at,
          imported: row.imported,
        }),
      )
      .execute();
  }

  /** Every kept result of a prompt's versions (all of them when `versions` is undefined), newest first. */
  resultsOf(projectId: string, promptId: string, versions?: string[]): Promise<ResultRow[]> {
    let query = this.db
      .selectFrom("example_results")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId);
    if (versions !== undefined) {
      if (versions.length === 0) return Promise.resolve([]);
      query = query.where("version", "in", versions);
    }
    return query.orderBy("ran_at", "desc").orderBy("example_id").execute();
  }

  /** Per version of the prompt, how many distinct examples have a result run here (imported ones are not). */
  async triedCounts(projectId: string, promptId: string): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom("example_results")
      .select(["version", (eb) => eb.fn.count<number>("example_id").distinct().as("n")])
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .where("imported", "=", 0)
      .groupBy("version")
      .execute();
    return new Map(rows.map((r) => [r.version, Number(r.n)]));
  }
}
