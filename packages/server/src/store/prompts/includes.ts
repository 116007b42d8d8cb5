import type { Kysely } from "kysely";
import type { Database, VersionIncludesTable } from "../schema.js";
import type { VersionIncludes } from "./prompt-rows.js";

/** One pin as stored: which version of which prompt holds it, and what it took. */
export type PinRow = Omit<VersionIncludesTable, "project_id" | "position">;

/** A pinned version as a save reads it: its sections (expanded) as stored, and its own includes' graph. */
export interface PinnedVersion {
  /** Null for a version saved before documents were stored (it has no includes: its rows are its text). */
  sectionsJson: string | null;
  depth: number;
  prompts: string[];
}

/** A pin of a prompt's version in another prompt's version, with when that version was saved. */
export interface DependentRow extends PinRow {
  created_at: string;
}

/**
 * The includes of versions and the graph they make (docs/includes.md), for one project. Pins are written
 * once with their version and never change; a prompt's deletion takes its versions' rows with it, and rows
 * that pin a deleted prompt's versions stay as history (the graph reads only pins of versions a prompt holds).
 */
export class IncludeStore {
  constructor(
    private readonly db: Kysely<Database>,
    readonly projectId: string,
  ) {}

  async insertPins(promptId: string, hash: string, includes: VersionIncludes): Promise<void> {
    if (includes.pins.length === 0) return;
    await this.db
      .insertInto("version_includes")
      .values(
        includes.pins.map((pin, position) => ({
          project_id: this.projectId,
          prompt_id: promptId,
          hash,
          position,
          reference: pin.reference,
          pointer: pin.pointer,
          included_prompt_id: pin.prompt,
          included_hash: pin.hash,
        })),
      )
      .execute();
  }

  /** A version's pins, in the order its includes first appear. */
  async pinsOf(promptId: string, hash: string): Promise<PinRow[]> {
    return this.db
      .selectFrom("version_includes")
      .select(["prompt_id", "hash", "reference", "pointer", "included_prompt_id", "included_hash"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .orderBy("position")
      .execute();
  }

  /** What a save needs of a version it pins; undefined when the prompt holds no such version. */
  async pinnedVersion(promptId: string, hash: string): Promise<PinnedVersion | undefined> {
    const row = await this.db
      .selectFrom("versions")
      .select(["sections_json", "include_depth", "included_prompts"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "=", promptId)
      .where("hash", "=", hash)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      sectionsJson: row.sections_json,
      depth: row.include_depth ?? 0,
      prompts: row.included_prompts === null ? [] : (JSON.parse(row.included_prompts) as string[]),
    };
  }

  /**
   * Every pin of a version `promptId` holds, in any version of another prompt: by dependent prompt, newest
   * version first. At most `limit` rows.
   */
  async dependentsOf(promptId: string, limit: number): Promise<DependentRow[]> {
    return this.db
      .selectFrom("version_includes as i")
      .innerJoin("versions as piece", (join) =>
        join
          .onRef("piece.project_id", "=", "i.project_id")
          .onRef("piece.prompt_id", "=", "i.included_prompt_id")
          .onRef("piece.hash", "=", "i.included_hash"),
      )
      .innerJoin("versions as v", (join) =>
        join
          .onRef("v.project_id", "=", "i.project_id")
          .onRef("v.prompt_id", "=", "i.prompt_id")
          .onRef("v.hash", "=", "i.hash"),
      )
      .select([
        "i.prompt_id",
        "i.hash",
        "i.reference",
        "i.pointer",
        "i.included_prompt_id",
        "i.included_hash",
        "v.created_at",
      ])
      .where("i.project_id", "=", this.projectId)
      .where("i.included_prompt_id", "=", promptId)
      .where("i.prompt_id", "!=", promptId)
      .orderBy("i.prompt_id")
      .orderBy("v.created_at", "desc")
      .orderBy("i.hash")
      .orderBy("i.position")
      .limit(limit)
      .execute();
  }

  /**
   * What serves each version of these prompts: production, latest, every other label, and a rollout's
   * candidate (under its label's name), as `prompt → version → labels`.
   */
  async servedVersions(promptIds: readonly string[]): Promise<Map<string, Map<string, string[]>>> {
    const served = new Map<string, Map<string, string[]>>();
    if (promptIds.length === 0) return served;
    const add = (prompt: string, version: string | null, label: string) => {
      if (version === null) return;
      const versions = served.get(prompt) ?? new Map<string, string[]>();
      const labels = versions.get(version) ?? [];
      if (!labels.includes(label)) labels.push(label);
      versions.set(version, labels);
      served.set(prompt, versions);
    };
    const ids = [...new Set(promptIds)];
    const pointers = await this.db
      .selectFrom("prompts")
      .select(["id", "production_version", "latest_version"])
      .where("project_id", "=", this.projectId)
      .where("id", "in", ids)
      .execute();
    for (const p of pointers) {
      add(p.id, p.production_version, "production");
      add(p.id, p.latest_version, "latest");
    }
    const labels = await this.db
      .selectFrom("prompt_labels")
      .select(["prompt_id", "name", "version"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "in", ids)
      .orderBy("name")
      .execute();
    for (const l of labels) add(l.prompt_id, l.version, l.name);
    const rollouts = await this.db
      .selectFrom("rollouts")
      .select(["prompt_id", "label", "candidate"])
      .where("project_id", "=", this.projectId)
      .where("prompt_id", "in", ids)
      .orderBy("label")
      .execute();
    for (const r of rollouts) add(r.prompt_id, r.candidate, r.label);
    return served;
  }

  /**
   * The pins of `promptId` in versions of other prompts that something serves (production, latest, a label,
   * a rollout's candidate); only those that follow `pointer` when it is given (production also when not
   * written). The other versions are history: they are listed by `dependentsOf`, never scanned here.
   */
  async servedPins(promptId: string, pointer?: string): Promise<PinRow[]> {
    let query = this.db
      .selectFrom("version_includes as i")
      .innerJoin("prompts as p", (join) =>
        join.onRef("p.project_id", "=", "i.project_id").onRef("p.id", "=", "i.prompt_id"),
      )
      .select(["i.prompt_id", "i.hash", "i.reference", "i.pointer", "i.included_prompt_id", "i.included_hash"])
      .where("i.project_id", "=", this.projectId)
      .where("i.included_prompt_id", "=", promptId)
      .where("i.prompt_id", "!=", promptId)
      .where((eb) =>
        eb.or([
          eb("i.hash", "=", eb.ref("p.production_version")),
          eb("i.hash", "=", eb.ref("p.latest_version")),
          eb.exists(
            eb
              .selectFrom("prompt_labels as l")
              .select("l.name")
              .whereRef("l.project_id", "=", "i.project_id")
              .whereRef("l.prompt_id", "=", "i.prompt_id")
              .whereRef("l.version", "=", "i.hash"),
          ),
          eb.exists(
            eb
              .selectFrom("rollouts as r")
              .select("r.label")
              .whereRef("r.project_id", "=", "i.project_id")
              .whereRef("r.prompt_id", "=", "i.prompt_id")
              .whereRef("r.candidate", "=", "i.hash"),
          ),
        ]),
      );
    if (pointer !== undefined) query = query.where("i.pointer", "=", pointer);
    return query.orderBy("i.prompt_id").orderBy("i.hash").orderBy("i.position").execute();
  }
}
