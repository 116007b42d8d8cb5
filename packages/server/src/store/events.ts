import {
  type ChangeEvent,
  isPromptEvent,
  type ProjectEvent,
  type PromptEvent,
  type PromptEventType,
} from "@promptstore/core/events";
import type { Kysely } from "kysely";
import type { DialectOperations } from "./dialects/operations.js";
import type { Database } from "./schema.js";

/** An event as a mutation describes it, before the store gives it an id. */
export type NewEvent = Omit<PromptEvent, "id">;
/** A project's event (no prompt) before the store gives it an id. */
export type NewProjectEvent = Omit<ProjectEvent, "id">;

const COLUMNS = [
  "id",
  "type",
  "prompt_id",
  "version",
  "production_version",
  "latest_version",
  "created_at",
  "details",
] as const;

/** The fields of the release path (and an evaluation's outcome, a stale include), kept together as the `details` column's JSON. */
type Details = Pick<
  PromptEvent,
  "label" | "previous_version" | "rollout" | "release" | "evaluation" | "include" | "plan"
>;
/** A project's event keeps all it says in `details`; its prompt and version columns are "" (never read). */
type ProjectDetails = Pick<ProjectEvent, "label" | "requirement" | "previous">;

function toEvent(row: {
  id: number | string;
  type: string;
  prompt_id: string;
  version: string;
  production_version: string | null;
  latest_version: string | null;
  created_at: string;
  details: string | null;
}): ChangeEvent {
  if (row.type === "label.requirement_changed") {
    const { label, requirement, previous } = JSON.parse(row.details ?? "{}") as ProjectDetails;
    return { id: Number(row.id), type: row.type, at: row.created_at, label, requirement, previous };
  }
  return {
    id: Number(row.id),
    type: row.type as PromptEventType,
    prompt_id: row.prompt_id,
    version: row.version,
    production_version: row.production_version,
    latest_version: row.latest_version,
    at: row.created_at,
    ...(row.details === null ? {} : (JSON.parse(row.details) as Details)),
  };
}

function detailsOf(event: NewEvent | NewProjectEvent): string | null {
  if (!isPromptEvent(event as ChangeEvent)) {
    const { label, requirement, previous } = event as NewProjectEvent;
    return JSON.stringify({ label, requirement, previous } satisfies ProjectDetails);
  }
  const { label, previous_version, rollout, release, evaluation, include, plan } = event as NewEvent;
  const details: Details = {
    ...(label !== undefined && { label }),
    ...(previous_version !== undefined && { previous_version }),
    ...(rollout !== undefined && { rollout }),
    ...(release !== undefined && { release }),
    ...(evaluation !== undefined && { evaluation }),
    ...(include !== undefined && { include }),
    ...(plan !== undefined && { plan }),
  };
  return Object.keys(details).length === 0 ? null : JSON.stringify(details);
}

/**
 * The events log. Within a project, ids follow commit order: a writer takes the project's events lock
 * (`lockEvents`: a transaction lock on PostgreSQL; SQLite has one writer at a time anyway) before it draws
 * its ids and holds it until commit, so no reader can see id N+1 committed while N is still to come.
 * "Everything after N" is then exact.
 */
export class EventStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Pick<DialectOperations, "lockEvents">,
  ) {}

  /** Records events in the transaction `db` is in; returns them with their ids. */
  async append(
    db: Kysely<Database>,
    projectId: string,
    events: (NewEvent | NewProjectEvent)[],
  ): Promise<ChangeEvent[]> {
    if (events.length === 0) return [];
    await this.dialect.lockEvents(db, projectId);
    const recorded: ChangeEvent[] = [];
    for (const event of events) {
      const prompt = isPromptEvent(event as ChangeEvent) ? (event as NewEvent) : undefined;
      const row = await db
        .insertInto("events")
        .values({
          project_id: projectId,
          type: event.type,
          // The columns are NOT NULL: a project's event has no prompt, and stores "" (toEvent never reads it).
          prompt_id: prompt?.prompt_id ?? "",
          version: prompt?.version ?? "",
          production_version: prompt?.production_version ?? null,
          latest_version: prompt?.latest_version ?? null,
          created_at: event.at,
          details: detailsOf(event),
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      recorded.push({ ...event, id: Number(row.id) } as ChangeEvent);
    }
    return recorded;
  }

  /** The project's events after `afterId`, oldest first, at most `limit`. */
  async since(projectId: string, afterId: number, limit: number): Promise<ChangeEvent[]> {
    const rows = await this.db
      .selectFrom("events")
      .select(COLUMNS)
      .where("project_id", "=", projectId)
      .where("id", ">", afterId)
      .orderBy("id")
      .limit(limit)
      .execute();
    return rows.map(toEvent);
  }

  /** The id of the project's latest event, 0 when it has none. */
  async lastId(projectId: string): Promise<number> {
    const row = await this.db
      .selectFrom("events")
      .select((eb) => eb.fn.max("id").as("last"))
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    return Number(row?.last ?? 0);
  }

  /** Events with ids up to this one may have been deleted. */
  async prunedThrough(): Promise<number> {
    const row = await this.db
      .selectFrom("event_horizon")
      .select("pruned_through")
      .where("id", "=", 1)
      .executeTakeFirst();
    return Number(row?.pruned_through ?? 0);
  }

  /** Deletes events recorded before `before` (ISO time); returns how many. */
  async prune(before: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const edge = await trx
        .selectFrom("events")
        .select((eb) => eb.fn.max("id").as("last"))
        .where("created_at", "<", before)
        .executeTakeFirst();
      const through = Number(edge?.last ?? 0);
      if (through === 0) return 0;
      const deleted = await trx.deleteFrom("events").where("id", "<=", through).executeTakeFirst();
      await trx
        .updateTable("event_horizon")
        .set({ pruned_through: through })
        .where("id", "=", 1)
        .where("pruned_through", "<", through)
        .execute();
      return Number(deleted.numDeletedRows);
    });
  }
}
