import { createHash, randomBytes } from "node:crypto";
import { can, type Permission } from "@promptstore/core/accounts/permissions";
import type { Role } from "@promptstore/core/dashboard";
import { AppError, badRequest, conflict, notFound } from "@promptstore/core/errors";
import type { AccountStore, ProjectGrant, User } from "../../store/accounts/accounts.js";
import { type Caller, requireRole } from "../access.js";
import { decoyHash, generatePassword, hashPassword, type PasswordCost, verifyPassword } from "./passwords.js";

export interface SignedIn {
  /** The cookie's value; only its SHA-256 is stored. */
  token: string;
  user: User;
  csrfToken: string;
}

export interface SessionState {
  user: User;
  csrfToken: string;
}

export interface AccountOptions {
  sessionTtlMs: number;
  /** What new password hashes cost (PROMPTSTORE_PASSWORD_HASH_COST); `standard` unless a test suite says. */
  passwordCost?: PasswordCost;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
// No field named: neither the e-mail nor the password alone is known to be the wrong one.
const WRONG_CREDENTIALS = "the e-mail or the password is wrong";

/** Thrown by changePassword for a wrong current password, so the caller can count it as a failed guess. */
export class WrongCurrentPassword extends AppError {
  constructor() {
    super("forbidden", "current_password: is wrong");
  }
}

/**
 * Dashboard accounts: users, sessions, and what each user may do where. Every dashboard action asks this
 * service for a caller with the permission it needs, so a role is enforced here, whatever the UI shows.
 */
export class AccountService {
  constructor(
    readonly store: AccountStore,
    private readonly options: AccountOptions,
  ) {}

  /** Creates an account; a password is generated (and returned, to be shown once) when none is given. */
  async createUser(
    email: string,
    password?: string,
  ): Promise<{ user: User; password: string; generated: boolean } | undefined> {
    const chosen = password ?? generatePassword();
    // A generated password is a one-time password: its holder is asked to choose one at first sign-in.
    const user = await this.store.createUser(
      email,
      await hashPassword(chosen, this.options.passwordCost),
      password === undefined,
    );
    return user && { user, password: chosen, generated: password === undefined };
  }

  /**
   * Checks the credentials; unknown e-mail and wrong password give the same error after the same work.
   * Throttling is the caller's (it knows the client's address).
   */
  async signIn(email: string, password: string): Promise<SignedIn> {
    const user = await this.store.findUserByEmail(email);
    const valid = await verifyPassword(password, user?.password_hash ?? (await decoyHash(this.options.passwordCost)));
    if (!user || !valid) throw new AppError("unauthorized", WRONG_CREDENTIALS);
    return this.startSession(user);
  }

  async startSession(user: User): Promise<SignedIn> {
    // Sessions are refused once expired; sweeping them here (sign-ins are rare) keeps the table small.
    await this.store.deleteExpiredSessions();
    const token = randomBytes(32).toString("base64url");
    const csrfToken = randomBytes(24).toString("base64url");
    const expires = new Date(Date.now() + this.options.sessionTtlMs).toISOString();
    await this.store.createSession(sha256(token), user.id, csrfToken, expires);
    return { token, user, csrfToken };
  }

  async session(token: string): Promise<SessionState | undefined> {
    const session = await this.store.findSession(sha256(token));
    if (!session) return undefined;
    if (session.expires_at <= new Date().toISOString()) {
      await this.store.deleteSession(sha256(token));
      return undefined;
    }
    const user = await this.store.findUser(session.user_id);
    return user && { user, csrfToken: session.csrf_token };
  }

  signOut(token: string): Promise<void> {
    return this.store.deleteSession(sha256(token));
  }

  /**
   * Ends every session of the user (this one too) and opens a new one for the browser that asked. The
   * current password is asked for, except right after a sign-in with a one-time password: that session
   * has just proven it, and the password cannot serve for anything else.
   */
  async changePassword(user: User, current: string | undefined, next: string): Promise<SignedIn> {
    if (!user.must_change_password) {
      if (current === undefined) throw badRequest("current_password: required");
      if (!(await verifyPassword(current, user.password_hash))) {
        throw new WrongCurrentPassword();
      }
    }
    await this.store.setPassword(user.id, await hashPassword(next, this.options.passwordCost), false);
    await this.store.deleteSessionsOf(user.id);
    return this.startSession({ ...user, must_change_password: false });
  }

  /** The operator's reset: a new password (generated unless given), and every session ends. */
  async resetPassword(email: string, password?: string): Promise<{ user: User; password: string } | undefined> {
    const user = await this.store.findUserByEmail(email);
    if (!user) return undefined;
    const chosen = password ?? generatePassword();
    await this.store.setPassword(
      user.id,
      await hashPassword(chosen, this.options.passwordCost),
      password === undefined,
    );
    await this.store.deleteSessionsOf(user.id);
    return { user, password: chosen };
  }

  /**
   * The caller a user is on a project. A project of an organization the user is not in
   * is not found, exactly like one that does not exist; a role too low for the action is 403.
   */
  async projectCaller(user: User, projectId: string, permission: Permission): Promise<Caller & { role: Role }> {
    const grant = await this.store.projectGrant(user.id, projectId);
    if (!grant) throw notFound(`project ${projectId.slice(0, 64)} not found`);
    requireRole(grant.role, permission);
    return toCaller(grant, user);
  }

  /** The user's standing in an organization, with the same rules as projectCaller. */
  async orgAccess(user: User, orgId: string, permission: Permission) {
    const found = await this.store.orgRole(user.id, orgId);
    if (!found) throw notFound(`organization ${orgId.slice(0, 64)} not found`);
    requireRole(found.role, permission);
    return { id: orgId, ...found };
  }

  memberships(user: User) {
    return this.store.membershipsOf(user.id);
  }

  members(orgId: string) {
    return this.store.members(orgId);
  }

  async changeRole(orgId: string, userId: string, role: Role) {
    await this.settle(await this.store.changeMembership(orgId, userId, { role }), userId);
    const member = (await this.store.members(orgId)).find((m) => m.user_id === userId);
    if (!member) throw notFound(`member ${userId.slice(0, 64)} not found`);
    return member;
  }

  async removeMember(orgId: string, userId: string): Promise<void> {
    await this.settle(await this.store.changeMembership(orgId, userId, { remove: true }), userId);
  }

  private async settle(outcome: "done" | "not_found" | "last_owner", userId: string): Promise<void> {
    if (outcome === "not_found") throw notFound(`member ${userId.slice(0, 64)} not found`);
    if (outcome === "last_owner") {
      throw conflict("role: an organization keeps at least one owner; make someone else owner first");
    }
  }
}

function toCaller(grant: ProjectGrant, user: User): Caller & { role: Role } {
  return {
    projectId: grant.projectId,
    projectName: grant.projectName,
    orgId: grant.orgId,
    plan: grant.plan,
    actor: `user:${user.email}`,
    // Editors and owners save and publish; viewers read.
    access: can(grant.role, "publish") ? "publish" : "read",
    role: grant.role,
  };
}
