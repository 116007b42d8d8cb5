import type { Kysely, Selectable } from "kysely";
import { type NewAuditEntry, recordAudit } from "../audit.js";
import type {
  Database,
  EvaluationAnswersTable,
  EvaluationDefaultsTable,
  EvaluationErrorsTable,
  EvaluationsTable,
  EvaluationVerdictsTable,
} from "../schema.js";

export type EvaluationRow = Selectable<EvaluationsTable>;
export type AnswerRow = Selectable<EvaluationAnswersTable>;
export type VerdictRow = Selectable<EvaluationVerdictsTable>;
export type ErrorRow = Selectable<EvaluationErrorsTable>;
export type DefaultsRow = Selectable<EvaluationDefaultsTable>;

/** What identifies kept answers (a version under its effective settings) and, with a check set, kept verdicts. */
export interface CellKey {
  projectId: string;
  version: string;
  settingsHash: string;
}

/** A case's place in the dataset version, with what is kept for it under one key. */
export interface CellRow {
  position: number;
  case_id: string;
  body: string;
  answer: string | null;
  finish_reason: string | null;
  tokens_in: number | null;
  tokens_out: number | null;
  latency_ms: number | null;
  pass: number | null;
  verdicts: string | null;
  error_code: string | null;
  error_message: string | null;
  error_detail: string | null;
}

/**
 * Evaluations, and the answers and verdicts they keep by content (migration 021). An evaluation is run by the
 * instance holding its lease: `claim` takes a free or lapsed one, `renew` extends it while the instance works
 * (and tells it of a stop asked on any instance), and every write of the run's state is conditional on the
 * lease, so an instance that lost it changes nothing.
 */
export class EvaluationStore {
  constructor(readonly db: Kysely<Database>) {}

  async insert(row: EvaluationRow): Promise<void> {
    await this.db.insertInto("evaluations").values(row).execute();
  }

  find(projectId: string, id: string): Promise<EvaluationRow | undefined> {
    return this.db
      .selectFrom("evaluations")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** By id alone: for the runner, which takes an evaluation over whatever its project. */
  findById(id: string): Promise<EvaluationRow | undefined> {
    return this.db.selectFrom("evaluations").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /** A prompt's evaluations, newest first. */
  list(projectId: string, promptId: string, limit: number): Promise<EvaluationRow[]> {
    return this.db
      .selectFrom("evaluations")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
  }

  /** The newest finished evaluation of this content that judged every case, to name as what a reuse repeats. */
  latestDone(projectId: string, contentKey: string): Promise<Pick<EvaluationRow, "id"> | undefined> {
    return this.db
      .selectFrom("evaluations")
      .select("id")
      .where("project_id", "=", projectId)
      .where("content_key", "=", contentKey)
      .where("status", "=", "done")
      .orderBy("created_at", "desc")
      .limit(1)
      .executeTakeFirst();
  }

  /** Takes the lease of a running evaluation that is free or lapsed; false when another instance holds it. */
  async claim(id: string, owner: string, now: string, until: string): Promise<boolean> {
    const result = await this.db
      .updateTable("evaluations")
      .set({ lease_owner: owner, lease_until: until })
      .where("id", "=", id)
      .where("status", "=", "running")
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now), eb("lease_owner", "=", owner)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Extends the lease and saves the progress; answers whether a stop was asked, or undefined when the lease is
   * no longer this instance's (it ended, or another instance took it over).
   */
  async renew(
    id: string,
    owner: string,
    until: string,
    summary: string | null,
  ): Promise<{ stop: boolean } | undefined> {
    const row = await this.db
      .updateTable("evaluations")
      .set(summary === null ? { lease_until: until } : { lease_until: until, summary })
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .where("status", "=", "running")
      .returning("stop_requested")
      .executeTakeFirst();
    return row === undefined ? undefined : { stop: row.stop_requested === 1 };
  }

  /** Lets the lease go at once (a shutdown), so that another instance takes the evaluation over without waiting. */
  async release(id: string, owner: string, now: string): Promise<void> {
    await this.db
      .updateTable("evaluations")
      .set({ lease_until: now })
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .where("status", "=", "running")
      .execute();
  }

  /** Running evaluations whose lease has lapsed (their instance stopped): the next to take over. */
  async lapsed(now: string, limit: number): Promise<{ id: string }[]> {
    return this.db
      .selectFrom("evaluations")
      .select("id")
      .where("status", "=", "running")
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
      .orderBy("created_at")
      .limit(limit)
      .execute();
  }

  async requestStop(projectId: string, id: string): Promise<boolean> {
    const result = await this.db
      .updateTable("evaluations")
      .set({ stop_requested: 1 })
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .where("status", "=", "running")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Ends a run the caller holds the lease of; false when it does not (then nothing changed). */
  async finish(
    id: string,
    owner: string | null,
    end: { status: string; summary: string; reason: string | null; at: string },
  ): Promise<boolean> {
    let query = this.db
      .updateTable("evaluations")
      .set({ status: end.status, summary: end.summary, reason: end.reason, finished_at: end.at, lease_until: null })
      .where("id", "=", id)
      .where("status", "=", "running");
    if (owner !== null) query = query.where("lease_owner", "=", owner);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** How many of a dataset version's cases have a verdict kept under this key and check set. */
  async judgedCount(key: CellKey, checksHash: string, datasetId: string, datasetVersion: string): Promise<number> {
    const row = await this.db
      .selectFrom("dataset_version_cases as p")
      .innerJoin("evaluation_verdicts as v", (join) =>
        join
          .onRef("v.case_id", "=", "p.case_id")
          .on("v.project_id", "=", key.projectId)
          .on("v.version", "=", key.version)
          .on("v.settings_hash", "=", key.settingsHash)
          .on("v.checks_hash", "=", checksHash),
      )
      .select((eb) => eb.fn.countAll().as("n"))
      .where("p.dataset_id", "=", datasetId)
      .where("p.version", "=", datasetVersion)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * A page of a dataset version's cases (from `after`, exclusive), each with what is kept for it under the key
   * and check set, and this evaluation's error for it at `versionIndex`.
   */
  cells(
    key: CellKey,
    checksHash: string,
    evaluation: { id: string; datasetId: string; datasetVersion: string; versionIndex: number },
    after: number,
    limit: number,
    positions?: readonly number[],
  ): Promise<CellRow[]> {
    let query = this.db
      .selectFrom("dataset_version_cases as p")
      .innerJoin("dataset_cases as c", (join) =>
        join.onRef("c.dataset_id", "=", "p.dataset_id").onRef("c.case_id", "=", "p.case_id"),
      )
      .leftJoin("evaluation_answers as a", (join) =>
        join
          .onRef("a.case_id", "=", "p.case_id")
          .on("a.project_id", "=", key.projectId)
          .on("a.version", "=", key.version)
          .on("a.settings_hash", "=", key.settingsHash),
      )
      .leftJoin("evaluation_verdicts as v", (join) =>
        join
          .onRef("v.case_id", "=", "p.case_id")
          .on("v.project_id", "=", key.projectId)
          .on("v.version", "=", key.version)
          .on("v.settings_hash", "=", key.settingsHash)
          .on("v.checks_hash", "=", checksHash),
      )
      .leftJoin("evaluation_errors as e", (join) =>
        join
          .onRef("e.case_id", "=", "p.case_id")
          .on("e.evaluation_id", "=", evaluation.id)
          .on("e.version_index", "=", evaluation.versionIndex),
      )
      .select([
        "p.position",
        "p.case_id",
        "c.body",
        "a.answer",
        "a.finish_reason",
        "a.tokens_in",
        "a.tokens_out",
        "a.latency_ms",
        "v.pass",
        "v.verdicts",
        "e.code as error_code",
        "e.message as error_message",
        "e.detail as error_detail",
      ])
      .where("p.dataset_id", "=", evaluation.datasetId)
      .where("p.version", "=", evaluation.datasetVersion)
      .where("p.position", ">", after);
    if (positions !== undefined) query = query.where("p.position", "in", positions);
    return query.orderBy("p.position").limit(limit).execute();
  }

  /** Keeps an answer; one already kept for the same content stays (two runs of one question agree to keep the first). */
  async keepAnswer(row: AnswerRow): Promise<void> {
    await this.db
      .insertInto("evaluation_answers")
      .values(row)
      .onConflict((oc) => oc.columns(["project_id", "version", "settings_hash", "case_id"]).doNothing())
      .execute();
  }

  async keepVerdict(row: VerdictRow): Promise<void> {
    await this.db
      .insertInto("evaluation_verdicts")
      .values(row)
      .onConflict((oc) => oc.columns(["project_id", "version", "settings_hash", "checks_hash", "case_id"]).doNothing())
      .execute();
  }

  async recordError(row: ErrorRow): Promise<void> {
    await this.db
      .insertInto("evaluation_errors")
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(["evaluation_id", "version_index", "case_id"])
          .doUpdateSet({ code: row.code, message: row.message, detail: row.detail }),
      )
      .execute();
  }

  /**
   * A prompt's evaluation defaults (migration 022), with the dataset only while it still exists in the project:
   * a deleted dataset reads as none.
   */
  async defaults(projectId: string, promptId: string): Promise<DefaultsRow | undefined> {
    const row = await this.db
      .selectFrom("evaluation_defaults as d")
      .leftJoin("datasets as ds", (join) =>
        join.onRef("ds.id", "=", "d.dataset_id").onRef("ds.project_id", "=", "d.project_id"),
      )
      .select(["d.project_id", "d.prompt_id", "d.checks", "d.updated_at", "d.updated_by", "ds.id as dataset_id"])
      .where("d.project_id", "=", projectId)
      .where("d.prompt_id", "=", promptId)
      .executeTakeFirst();
    return row === undefined ? undefined : { ...row, dataset_id: row.dataset_id ?? null };
  }

  /** Saves a prompt's evaluation defaults in place of any, and writes `audit` in the same transaction. */
  async saveDefaults(row: DefaultsRow, audit: readonly NewAuditEntry[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("evaluation_defaults")
        .values(row)
        .onConflict((oc) =>
          oc.columns(["project_id", "prompt_id"]).doUpdateSet({
            checks: row.checks,
            dataset_id: row.dataset_id,
            updated_at: row.updated_at,
            updated_by: row.updated_by,
          }),
        )
        .execute();
      await recordAudit(trx, audit);
    });
  }
}
