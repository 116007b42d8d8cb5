import { randomBytes } from "node:crypto";
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { PlanName } from "@promptstore/core/accounts/plans";
import { sha256Hex } from "@promptstore/core/prompts/hash";
import type { Kysely } from "kysely";
import { recordAudit } from "../audit.js";
import { newId, now } from "../ids.js";
import type { Database } from "../schema.js";

export interface Organization {
  id: string;
  name: string;
  plan: string;
  created_at: string;
}

export interface Project {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyInfo {
  id: string;
  project_id: string;
  prefix: string;
  scope: KeyScope;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** What an API key grants: one project, within one organization and its plan. */
export interface KeyGrant {
  keyId: string;
  projectId: string;
  projectName: string;
  orgId: string;
  plan: string;
  /** What the key may do. */
  access: KeyScope;
  /** Who acts with this key, as recorded with what it saves: `key:<prefix>`. */
  actor: string;
}

export const KEY_PREFIX_LENGTH = 12;
const KEY_COLUMNS = ["id", "project_id", "prefix", "scope", "created_at", "revoked_at", "last_used_at"] as const;

export const hashApiKey = (key: string): string => sha256Hex(key);

/** Organizations, projects and API keys: the operator's side of the store. */
export class TenantStore {
  constructor(private readonly db: Kysely<Database>) {}

  async isEmpty(): Promise<boolean> {
    const row = await this.db.selectFrom("organizations").select("id").limit(1).executeTakeFirst();
    return row === undefined;
  }

  async createOrganization(name: string, plan: PlanName): Promise<Organization> {
    const org = { id: newId("org"), name, plan, created_at: now() };
    await this.db.insertInto("organizations").values(org).execute();
    return org;
  }

  /** By id, or by name (names are unique). */
  async findOrganization(ref: string): Promise<Organization | undefined> {
    return this.db
      .selectFrom("organizations")
      .selectAll()
      .where((eb) => eb.or([eb("id", "=", ref), eb("name", "=", ref)]))
      .executeTakeFirst();
  }

  /** Changes the plan and records it in the audit trail, in one transaction; a plan set again is no change. */
  async setPlan(orgId: string, plan: PlanName, actor: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const before = await tx.selectFrom("organizations").select("plan").where("id", "=", orgId).executeTakeFirst();
      if (!before || before.plan === plan) return;
      await tx.updateTable("organizations").set({ plan }).where("id", "=", orgId).execute();
      await recordAudit(tx, [
        {
          orgId,
          projectId: null,
          at: now(),
          actor,
          action: "plan.changed",
          target: orgId,
          before: before.plan,
          after: plan,
        },
      ]);
    });
  }

  async createProject(orgId: string, name: string): Promise<Project> {
    const project = { id: newId("proj"), org_id: orgId, name, created_at: now() };
    await this.db
      .insertInto("projects")
      .values({ ...project, prompt_count: 0 })
      .execute();
    return project;
  }

  /** By id, or by name when exactly one project has it. */
  async findProjects(ref: string): Promise<Project[]> {
    const byId = await this.db
      .selectFrom("projects")
      .select(["id", "org_id", "name", "created_at"])
      .where("id", "=", ref)
      .execute();
    if (byId.length > 0) return byId;
    return this.db
      .selectFrom("projects")
      .select(["id", "org_id", "name", "created_at"])
      .where("name", "=", ref)
      .execute();
  }

  /**
   * Creates a key and its audit row in one transaction; the plain key is returned this once and only its
   * SHA-256 is stored.
   */
  async createApiKey(projectId: string, scope: KeyScope, actor: string): Promise<ApiKeyInfo & { key: string }> {
    const key = `ps_${randomBytes(32).toString("base64url")}`;
    const info = {
      id: newId("key"),
      project_id: projectId,
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      scope,
      created_at: now(),
    };
    await this.db.transaction().execute(async (tx) => {
      const project = await tx
        .selectFrom("projects")
        .select("org_id")
        .where("id", "=", projectId)
        .executeTakeFirstOrThrow();
      await tx
        .insertInto("api_keys")
        .values({ ...info, key_hash: hashApiKey(key), revoked_at: null })
        .execute();
      await recordAudit(tx, [
        {
          orgId: project.org_id,
          projectId,
          at: info.created_at,
          actor,
          action: "key.created",
          target: info.id,
          before: null,
          after: scope,
        },
      ]);
    });
    return { ...info, revoked_at: null, last_used_at: null, key };
  }

  async listApiKeys(projectId: string): Promise<ApiKeyInfo[]> {
    return this.db
      .selectFrom("api_keys")
      .select(KEY_COLUMNS)
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  }

  /**
   * Returns undefined when no key has that id (within `projectId`, when given); revoking twice keeps the
   * first revocation time.
   */
  async revokeApiKey(
    keyId: string,
    actor: string,
    projectId?: string,
  ): Promise<{ key: ApiKeyInfo; revoked: boolean } | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const at = now();
      let update = tx
        .updateTable("api_keys")
        .set({ revoked_at: at })
        .where("id", "=", keyId)
        .where("revoked_at", "is", null);
      if (projectId !== undefined) update = update.where("project_id", "=", projectId);
      const updated = await update.executeTakeFirst();
      let select = tx.selectFrom("api_keys").select(KEY_COLUMNS).where("id", "=", keyId);
      if (projectId !== undefined) select = select.where("project_id", "=", projectId);
      const key = await select.executeTakeFirst();
      if (!key) return undefined;
      const revoked = Number(updated.numUpdatedRows) > 0;
      if (revoked) {
        const project = await tx
          .selectFrom("projects")
          .select("org_id")
          .where("id", "=", key.project_id)
          .executeTakeFirstOrThrow();
        await recordAudit(tx, [
          {
            orgId: project.org_id,
            projectId: key.project_id,
            at,
            actor,
            action: "key.revoked",
            target: key.id,
            before: key.scope,
            after: "revoked",
          },
        ]);
      }
      return { key, revoked };
    });
  }

  async touchApiKey(keyId: string, at: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", keyId).execute();
  }

  /** The organization's projects with how many prompts each holds (the plan's limit counts them). */
  async projectsWithCounts(orgId: string): Promise<{ id: string; name: string; prompt_count: number }[]> {
    const rows = await this.db
      .selectFrom("projects")
      .select(["id", "name", "prompt_count"])
      .where("org_id", "=", orgId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map((r) => ({ ...r, prompt_count: Number(r.prompt_count) }));
  }

  async findGrant(key: string): Promise<KeyGrant | undefined> {
    const row = await this.db
      .selectFrom("api_keys as k")
      .innerJoin("projects as p", "p.id", "k.project_id")
      .innerJoin("organizations as o", "o.id", "p.org_id")
      .select([
        "k.id as keyId",
        "k.prefix",
        "k.scope as access",
        "p.id as projectId",
        "p.name as projectName",
        "o.id as orgId",
        "o.plan as plan",
      ])
      .where("k.key_hash", "=", hashApiKey(key))
      .where("k.revoked_at", "is", null)
      .executeTakeFirst();
    if (!row) return undefined;
    const { prefix, ...grant } = row;
    return { ...grant, actor: `key:${prefix}` };
  }
}
