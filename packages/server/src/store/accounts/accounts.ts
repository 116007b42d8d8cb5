import type { Role } from "@promptstore/core/dashboard";
import type { Kysely } from "kysely";
import { newId, now } from "../ids.js";
import type { Database } from "../schema.js";

export interface User {
  id: string;
  email: string;
  password_hash: string;
  must_change_password: boolean;
  created_at: string;
}

export interface MemberRow {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
}

/** What a user may reach in one project: the project, its organization, its plan, and the user's role there. */
export interface ProjectGrant {
  projectId: string;
  projectName: string;
  orgId: string;
  orgName: string;
  plan: string;
  role: Role;
}

export interface SessionRow {
  user_id: string;
  csrf_token: string;
  expires_at: string;
}

const toUser = (row: Database["users"]): User => ({ ...row, must_change_password: row.must_change_password === 1 });

/** Users, their memberships in organizations, and their sessions. */
export class AccountStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createUser(email: string, passwordHash: string, mustChangePassword: boolean): Promise<User | undefined> {
    const user = {
      id: newId("usr"),
      email,
      password_hash: passwordHash,
      must_change_password: mustChangePassword ? 1 : 0,
      created_at: now(),
    };
    // The unique e-mail decides between concurrent creations, not a prior read.
    const result = await this.db
      .insertInto("users")
      .values(user)
      .onConflict((oc) => oc.column("email").doNothing())
      .executeTakeFirst();
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n ? toUser(user) : undefined;
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    const row = await this.db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst();
    return row && toUser(row);
  }

  async findUser(id: string): Promise<User | undefined> {
    const row = await this.db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toUser(row);
  }

  async setPassword(userId: string, passwordHash: string, mustChange: boolean): Promise<void> {
    await this.db
      .updateTable("users")
      .set({ password_hash: passwordHash, must_change_password: mustChange ? 1 : 0 })
      .where("id", "=", userId)
      .execute();
  }

  /**
   * Removes the user, their memberships and their sessions, unless they are the last owner of an
   * organization (whose name is then returned).
   */
  async deleteUser(userId: string): Promise<{ deleted: boolean; lastOwnerOf?: string }> {
    return this.db.transaction().execute(async (trx) => {
      const sole = await trx
        .selectFrom("memberships as m")
        .innerJoin("organizations as o", "o.id", "m.org_id")
        .select("o.name")
        .where("m.user_id", "=", userId)
        .where("m.role", "=", "owner")
        .where((eb) =>
          eb(
            eb
              .selectFrom("memberships as other")
              .select((e) => e.fn.countAll<number>().as("n"))
              .whereRef("other.org_id", "=", "m.org_id")
              .where("other.role", "=", "owner"),
            "=",
            1,
          ),
        )
        .executeTakeFirst();
      if (sole) return { deleted: false, lastOwnerOf: sole.name };
      await trx.deleteFrom("sessions").where("user_id", "=", userId).execute();
      await trx.deleteFrom("memberships").where("user_id", "=", userId).execute();
      const result = await trx.deleteFrom("users").where("id", "=", userId).executeTakeFirst();
      return { deleted: result.numDeletedRows > 0n };
    });
  }

  async hasUsers(): Promise<boolean> {
    return (await this.db.selectFrom("users").select("id").limit(1).executeTakeFirst()) !== undefined;
  }

  async addMembership(orgId: string, userId: string, role: Role): Promise<boolean> {
    const result = await this.db
      .insertInto("memberships")
      .values({ org_id: orgId, user_id: userId, role, created_at: now() })
      .onConflict((oc) => oc.columns(["org_id", "user_id"]).doNothing())
      .executeTakeFirst();
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }

  async members(orgId: string): Promise<MemberRow[]> {
    const rows = await this.db
      .selectFrom("memberships as m")
      .innerJoin("users as u", "u.id", "m.user_id")
      .select(["m.user_id", "u.email", "m.role", "m.created_at"])
      .where("m.org_id", "=", orgId)
      .orderBy("m.created_at")
      .orderBy("u.email")
      .execute();
    return rows as MemberRow[];
  }

  /**
   * Changes a role or removes a member, unless that would leave the organization without an owner.
   * The owner count is read in the same transaction, under a lock of the organization's row, so two
   * owners demoting each other at once cannot both succeed.
   */
  async changeMembership(
    orgId: string,
    userId: string,
    change: { role: Role } | { remove: true },
  ): Promise<"done" | "not_found" | "last_owner"> {
    return this.db.transaction().execute(async (trx) => {
      // An UPDATE that changes nothing still takes the row lock (PostgreSQL) / the write lock (SQLite).
      await trx
        .updateTable("organizations")
        .set((eb) => ({ plan: eb.ref("plan") }))
        .where("id", "=", orgId)
        .execute();
      const current = await trx
        .selectFrom("memberships")
        .select("role")
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (!current) return "not_found";
      const losesOwner = current.role === "owner" && ("remove" in change || change.role !== "owner");
      if (losesOwner) {
        const owners = await trx
          .selectFrom("memberships")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("org_id", "=", orgId)
          .where("role", "=", "owner")
          .executeTakeFirstOrThrow();
        if (Number(owners.n) <= 1) return "last_owner";
      }
      if ("remove" in change) {
        await trx.deleteFrom("memberships").where("org_id", "=", orgId).where("user_id", "=", userId).execute();
      } else {
        await trx
          .updateTable("memberships")
          .set({ role: change.role })
          .where("org_id", "=", orgId)
          .where("user_id", "=", userId)
          .execute();
      }
      return "done";
    });
  }

  /** Every organization the user belongs to, with the role and the organization's projects. */
  async membershipsOf(userId: string) {
    const orgs = await this.db
      .selectFrom("memberships as m")
      .innerJoin("organizations as o", "o.id", "m.org_id")
      .select(["o.id", "o.name", "o.plan", "m.role"])
      .where("m.user_id", "=", userId)
      .orderBy("o.name")
      .execute();
    if (orgs.length === 0) return [];
    const projects = await this.db
      .selectFrom("projects")
      .select(["id", "org_id", "name", "created_at"])
      .where(
        "org_id",
        "in",
        orgs.map((o) => o.id),
      )
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return orgs.map((o) => ({
      org: { id: o.id, name: o.name, plan: o.plan },
      role: o.role as Role,
      projects: projects
        .filter((p) => p.org_id === o.id)
        .map((p) => ({ id: p.id, name: p.name, created_at: p.created_at })),
    }));
  }

  /** The user's grant on a project, or undefined when the project does not exist or is not theirs. */
  async projectGrant(userId: string, projectId: string): Promise<ProjectGrant | undefined> {
    const row = await this.db
      .selectFrom("projects as p")
      .innerJoin("organizations as o", "o.id", "p.org_id")
      .innerJoin("memberships as m", (join) => join.onRef("m.org_id", "=", "o.id").on("m.user_id", "=", userId))
      .select([
        "p.id as projectId",
        "p.name as projectName",
        "o.id as orgId",
        "o.name as orgName",
        "o.plan as plan",
        "m.role as role",
      ])
      .where("p.id", "=", projectId)
      .executeTakeFirst();
    return row as ProjectGrant | undefined;
  }

  /** The user's role in an organization, or undefined when they are not a member (or it does not exist). */
  async orgRole(userId: string, orgId: string): Promise<{ role: Role; name: string; plan: string } | undefined> {
    const row = await this.db
      .selectFrom("memberships as m")
      .innerJoin("organizations as o", "o.id", "m.org_id")
      .select(["m.role", "o.name", "o.plan"])
      .where("m.org_id", "=", orgId)
      .where("m.user_id", "=", userId)
      .executeTakeFirst();
    return row as { role: Role; name: string; plan: string } | undefined;
  }

  async createSession(tokenHash: string, userId: string, csrfToken: string, expiresAt: string): Promise<void> {
    await this.db
      .insertInto("sessions")
      .values({
        token_hash: tokenHash,
        user_id: userId,
        csrf_token: csrfToken,
        created_at: now(),
        expires_at: expiresAt,
      })
      .execute();
  }

  async findSession(tokenHash: string): Promise<SessionRow | undefined> {
    return this.db
      .selectFrom("sessions")
      .select(["user_id", "csrf_token", "expires_at"])
      .where("token_hash", "=", tokenHash)
      .executeTakeFirst();
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("token_hash", "=", tokenHash).execute();
  }

  async deleteSessionsOf(userId: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("user_id", "=", userId).execute();
  }

  /** Expired sessions are refused when read; this only keeps the table small. */
  async deleteExpiredSessions(): Promise<void> {
    await this.db.deleteFrom("sessions").where("expires_at", "<", now()).execute();
  }
}
