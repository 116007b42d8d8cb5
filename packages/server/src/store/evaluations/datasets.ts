import { randomBytes } from "node:crypto";
import { type Kysely, type Selectable, sql } from "kysely";
import { type NewAuditEntry, recordAudit } from "../audit.js";
import type { DialectOperations } from "../dialects/operations.js";
import { lockRow } from "../row-lock.js";
import type { Database, DatasetsTable, DatasetVersionsTable } from "../schema.js";

export type DatasetRow = Selectable<DatasetsTable>;
export type DatasetVersionRow = Selectable<DatasetVersionsTable>;

/** A case as stored: its id (the SHA-256 of its canonical JSON) and that JSON. */
export interface StoredCase {
  case_id: string;
  body: string;
}

/** A case of a version, in its place. */
export interface PlacedCase extends StoredCase {
  position: number;
}

/** The version key under which a version's case list is written before its hash is known. */
const STAGE_PREFIX = "stage:";

/** A stage key's time: milliseconds since the epoch, 13 digits (until the year 2286), so keys sort by age. */
const stageTime = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(13, "0");

/** What committing a stage did: the version made (or found) and the head before; or the head that moved. */
export type CommitResult = { created: boolean; previousHead: string | null } | { headMoved: string | null };

/**
 * Datasets, their versions and cases (migration 021). A version is built in a stage: its case list is written
 * under a temporary key (`stage:<random>`), one page at a time, while the caller hashes the cases in order;
 * `commitStage` then names it by its hash, or drops it when that version already exists. So a dataset of any
 * size is written without being held whole, and an interrupted build leaves no version (`dropStage`, or the
 * sweep of stale stages). Every query names its project or a dataset the service found in the caller's.
 */
export class DatasetStore {
  constructor(
    readonly db: Kysely<Database>,
    /** The store's dialect: its anti-join for orphaned bodies differs. */
    private readonly operations: Pick<DialectOperations, "deleteUnlistedCases">,
  ) {}

  list(projectId: string): Promise<(DatasetRow & { case_count: number | null })[]> {
    return (
      this.db
        .selectFrom("datasets as d")
        .leftJoin("dataset_versions as v", (join) =>
          join.onRef("v.dataset_id", "=", "d.id").onRef("v.hash", "=", "d.head"),
        )
        .selectAll("d")
        .select("v.case_count")
        .where("d.project_id", "=", projectId)
        // A dataset whose first version is still being imported is not there yet.
        .where("d.head", "is not", null)
        .orderBy("d.name")
        .execute()
    );
  }

  find(projectId: string, id: string): Promise<DatasetRow | undefined> {
    return this.db
      .selectFrom("datasets")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  findByName(projectId: string, name: string): Promise<DatasetRow | undefined> {
    return this.db
      .selectFrom("datasets")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("name", "=", name)
      .executeTakeFirst();
  }

  /** Inserts the dataset; false when the project already has one of that name (the unique index decides). */
  async create(row: DatasetRow): Promise<boolean> {
    const result = await this.db
      .insertInto("datasets")
      .values(row)
      .onConflict((oc) => oc.columns(["project_id", "name"]).doNothing())
      .executeTakeFirst();
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }

  async update(
    projectId: string,
    id: string,
    patch: Partial<Pick<DatasetRow, "name" | "description">>,
    at: string,
    audit: readonly NewAuditEntry[] = [],
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("datasets")
        .set({ ...patch, updated_at: at })
        .where("project_id", "=", projectId)
        .where("id", "=", id)
        .executeTakeFirst();
      const done = Number(result.numUpdatedRows) === 1;
      if (done) await recordAudit(trx, audit);
      return done;
    });
  }

  /** Deletes the dataset with its versions and cases (the foreign keys cascade), and writes `audit` with it. */
  async remove(projectId: string, id: string, audit: readonly NewAuditEntry[] = []): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom("datasets")
        .where("project_id", "=", projectId)
        .where("id", "=", id)
        .executeTakeFirst();
      const done = Number(result.numDeletedRows) === 1;
      if (done) await recordAudit(trx, audit);
      return done;
    });
  }

  /** The dataset's versions, newest first. */
  versions(datasetId: string): Promise<DatasetVersionRow[]> {
    return this.db
      .selectFrom("dataset_versions")
      .selectAll()
      .where("dataset_id", "=", datasetId)
      .orderBy("created_at", "desc")
      .orderBy("hash")
      .execute();
  }

  version(datasetId: string, hash: string): Promise<DatasetVersionRow | undefined> {
    return this.db
      .selectFrom("dataset_versions")
      .selectAll()
      .where("dataset_id", "=", datasetId)
      .where("hash", "=", hash)
      .executeTakeFirst();
  }

  /** Up to two version hashes starting with `prefix`: enough to tell unique from ambiguous. */
  async versionsByPrefix(datasetId: string, prefix: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom("dataset_versions")
      .select("hash")
      .where("dataset_id", "=", datasetId)
      .where("hash", ">=", prefix)
      .where("hash", "<", `${prefix}\uffff`)
      .orderBy("hash")
      .limit(2)
      .execute();
    return rows.map((r) => r.hash);
  }

  /** A version's cases from `after` (a position, exclusive; -1 for the first), in order, at most `limit`. */
  page(datasetId: string, version: string, after: number, limit: number): Promise<PlacedCase[]> {
    return this.db
      .selectFrom("dataset_version_cases as p")
      .innerJoin("dataset_cases as c", (join) =>
        join.onRef("c.dataset_id", "=", "p.dataset_id").onRef("c.case_id", "=", "p.case_id"),
      )
      .select(["p.position", "p.case_id", "c.body"])
      .where("p.dataset_id", "=", datasetId)
      .where("p.version", "=", version)
      .where("p.position", ">", after)
      .orderBy("p.position")
      .limit(limit)
      .execute();
  }

  /** A version's case ids from `after`, in order, without their bodies. */
  async caseIds(datasetId: string, version: string, after: number, limit: number): Promise<PlacedCase[]> {
    const rows = await this.db
      .selectFrom("dataset_version_cases")
      .select(["position", "case_id"])
      .where("dataset_id", "=", datasetId)
      .where("version", "=", version)
      .where("position", ">", after)
      .orderBy("position")
      .limit(limit)
      .execute();
    return rows.map((r) => ({ ...r, body: "" }));
  }

  static stageKey(token: string): string {
    return `${STAGE_PREFIX}${token}`;
  }

  /** A new stage's key: `stage:<time>:<random>`, its time first so that stale stages are found by range. */
  static newStage(at = Date.now()): string {
    return DatasetStore.stageKey(`${stageTime(at)}:${randomBytes(8).toString("hex")}`);
  }

  /**
   * Drops the dataset's stages begun before `before` (ms since the epoch): builds that died with their
   * process. A range of the primary key, so it costs what the stale rows cost. Returns how many rows went.
   */
  async sweepStages(datasetId: string, before: number): Promise<number> {
    const result = await this.db
      .deleteFrom("dataset_version_cases")
      .where("dataset_id", "=", datasetId)
      .where("version", ">=", STAGE_PREFIX)
      .where("version", "<", `${STAGE_PREFIX}${stageTime(before)}`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Datasets whose first version was being imported and that were created before `before` (ISO time). */
  async unbuiltBefore(before: string): Promise<DatasetRow[]> {
    return this.db
      .selectFrom("datasets")
      .selectAll()
      .where("head", "is", null)
      .where("created_at", "<", before)
      .execute();
  }

  /** Every dataset's id, for the sweep at start-up. */
  async allIds(): Promise<string[]> {
    return (await this.db.selectFrom("datasets").select("id").execute()).map((r) => r.id);
  }

  /**
   * Deletes the dataset's case bodies that no version and no stage lists any more (what a dropped stage
   * wrote). Under the dataset's row lock, which `stageCases` takes too: a build that is writing its pages
   * never has a body it relies on deleted under it.
   */
  async deleteOrphanCases(datasetId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await lockRow(trx, "datasets", { id: datasetId });
      await this.operations.deleteUnlistedCases(trx, datasetId);
    });
  }

  /**
   * Writes cases into a stage at `from`, `from + 1`, …: bodies once per dataset (a case already stored is kept),
   * and their places under the stage's key.
   */
  async stageCases(datasetId: string, stage: string, from: number, cases: readonly StoredCase[]): Promise<void> {
    if (cases.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      // Serialized with deleteOrphanCases: a body found here ("kept") is not deleted before its place is.
      await lockRow(trx, "datasets", { id: datasetId });
      // Chunks keep each statement under SQLite's and PostgreSQL's parameter limits.
      for (let i = 0; i < cases.length; i += 200) {
        const chunk = cases.slice(i, i + 200);
        await trx
          .insertInto("dataset_cases")
          .values(chunk.map((c) => ({ dataset_id: datasetId, case_id: c.case_id, body: c.body })))
          .onConflict((oc) => oc.columns(["dataset_id", "case_id"]).doNothing())
          .execute();
        await trx
          .insertInto("dataset_version_cases")
          .values(
            chunk.map((c, j) => ({
              dataset_id: datasetId,
              version: stage,
              position: from + i + j,
              case_id: c.case_id,
            })),
          )
          .execute();
      }
    });
  }

  /** Copies a version's case list into a stage (an append starts from its base): ids only, in one statement. */
  async stageCopy(datasetId: string, version: string, stage: string): Promise<void> {
    await this.db
      .insertInto("dataset_version_cases")
      .columns(["dataset_id", "version", "position", "case_id"])
      .expression((eb) =>
        eb
          .selectFrom("dataset_version_cases")
          .select((s) => ["dataset_id", s.val(stage).as("version"), "position", "case_id"])
          .where("dataset_id", "=", datasetId)
          .where("version", "=", version),
      )
      .execute();
  }

  /**
   * The first place at which a stage holds a case it held before (the earliest second occurrence), with the
   * place of that earlier one, or undefined. One sort of the stage's rows (a window over each case id), not a
   * join of the stage with itself: 100 000 cases cost what sorting them costs.
   */
  async repeatedCase(datasetId: string, stage: string): Promise<{ first: number; second: number } | undefined> {
    const result = await sql<{ first: number | string; second: number | string }>`
      select first, position as second from (
        select position,
          row_number() over (partition by case_id order by position) as occurrence,
          min(position) over (partition by case_id) as first
        from dataset_version_cases
        where dataset_id = ${datasetId} and version = ${stage}
      ) as placed
      where occurrence = 2
      order by position
      limit 1`.execute(this.db);
    const row = result.rows[0];
    return row === undefined ? undefined : { first: Number(row.first), second: Number(row.second) };
  }

  /**
   * Names a stage by its hash and makes it the dataset's head. When that version exists already, the stage is
   * dropped and the existing version stays (`created: false`); it becomes the head again if it was not.
   * With `expectHead` (a hash, or null for a dataset with no version yet), nothing is done when the head is
   * not that any more (`headMoved`: what it is). `audit` gives the rows to write with the change, in its
   * transaction.
   */
  async commitStage(
    datasetId: string,
    stage: string,
    version: Omit<DatasetVersionRow, "dataset_id">,
    options: {
      expectHead?: string | null;
      audit?: (done: { created: boolean; previousHead: string | null }) => NewAuditEntry[];
    } = {},
  ): Promise<CommitResult> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, "datasets", { id: datasetId });
      const dataset = await trx.selectFrom("datasets").select("head").where("id", "=", datasetId).executeTakeFirst();
      const previousHead = dataset?.head ?? null;
      if (options.expectHead !== undefined && previousHead !== options.expectHead) return { headMoved: previousHead };
      const existing = await trx
        .selectFrom("dataset_versions")
        .select("hash")
        .where("dataset_id", "=", datasetId)
        .where("hash", "=", version.hash)
        .executeTakeFirst();
      let created = false;
      if (existing) {
        await trx
          .deleteFrom("dataset_version_cases")
          .where("dataset_id", "=", datasetId)
          .where("version", "=", stage)
          .execute();
      } else {
        await trx
          .updateTable("dataset_version_cases")
          .set({ version: version.hash })
          .where("dataset_id", "=", datasetId)
          .where("version", "=", stage)
          .execute();
        await trx
          .insertInto("dataset_versions")
          .values({ dataset_id: datasetId, ...version })
          .execute();
        created = true;
      }
      await trx
        .updateTable("datasets")
        .set({ head: version.hash, updated_at: version.created_at })
        .where("id", "=", datasetId)
        .execute();
      if (options.audit) await recordAudit(trx, options.audit({ created, previousHead }));
      return { created, previousHead };
    });
  }

  async dropStage(datasetId: string, stage: string): Promise<void> {
    await this.db
      .deleteFrom("dataset_version_cases")
      .where("dataset_id", "=", datasetId)
      .where("version", "=", stage)
      .execute();
  }
}
