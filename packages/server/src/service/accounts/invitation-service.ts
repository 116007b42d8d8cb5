import { createHash, randomBytes } from "node:crypto";
import type { CreatedInvitation, InvitationPreview, InvitationView, Role } from "@promptstore/core/dashboard";
import { AppError, conflict, notFound } from "@promptstore/core/errors";
import type { User } from "../../store/accounts/accounts.js";
import {
  type InvitationRow,
  type InvitationStore,
  invitationStatus,
  toInvitationView,
} from "../../store/accounts/invitations.js";
import { newId, now } from "../../store/ids.js";
import type { AccountService } from "./account-service.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The dashboard's page for an invitation; the token rides in the fragment, which no server or log sees. */
export const invitationLink = (token: string): string => `/invite#${token}`;

export interface InvitationOptions {
  ttlMs: number;
}

/** Who acts on an organization's invitations: an owner (checked by the caller's surface) or the operator. */
export interface InvitingActor {
  orgId: string;
  /** `user:<e-mail>` or `cli`. */
  actor: string;
}

const NOT_USABLE = {
  expired: "invitation: has expired; ask for a new one",
  revoked: "invitation: was revoked; ask for a new one",
  accepted: "invitation: was already accepted",
} as const;

/**
 * Membership is an invitation, never imposed: an owner (or the operator) invites an e-mail with a role and
 * gets a link, shown once; that e-mail's account, signed in, joins through it. The link is in the inviter's
 * hands, so it proves nothing about owning the address: it never creates an account (the operator does), and
 * no answer to it differs by whether the address has an account, so it tells nobody which do (issue 35).
 */
export class InvitationService {
  constructor(
    private readonly store: InvitationStore,
    private readonly accounts: AccountService,
    private readonly options: InvitationOptions,
  ) {}

  async invite(by: InvitingActor, email: string, role: Role): Promise<CreatedInvitation> {
    // Members are listed to the owner anyway: saying so is no oracle, and an invitation would be useless.
    const members = await this.accounts.members(by.orgId);
    if (members.some((m) => m.email === email)) {
      throw conflict(`email: ${email} is already a member of this organization`);
    }
    const token = randomBytes(32).toString("base64url");
    const at = now();
    const row: InvitationRow = {
      id: newId("inv"),
      org_id: by.orgId,
      email,
      role,
      token_hash: sha256(token),
      invited_by: by.actor,
      created_at: at,
      expires_at: new Date(Date.parse(at) + this.options.ttlMs).toISOString(),
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    };
    await this.store.create(row, this.audit(by, "invitation.created", email, null, role, at));
    return { ...toInvitationView(row, at), token, link: invitationLink(token) };
  }

  async list(orgId: string): Promise<InvitationView[]> {
    const at = now();
    return (await this.store.list(orgId)).map((row) => toInvitationView(row, at));
  }

  async revoke(by: InvitingActor, id: string): Promise<InvitationView> {
    const found = await this.store.find(by.orgId, id);
    if (!found) throw notFound(`invitation ${id.slice(0, 64)} not found`);
    const at = now();
    const audit = this.audit(by, "invitation.revoked", found.email, found.role, "revoked", at);
    if (!(await this.store.revoke(by.orgId, id, at, audit))) {
      const status = invitationStatus(found, at);
      throw conflict(status === "pending" ? "invitation: changed meanwhile; reload" : NOT_USABLE[status]);
    }
    return toInvitationView({ ...found, revoked_at: at }, at);
  }

  /** The pending invitation a token names; a token of none is not found, a used one says why. */
  private async pending(token: string) {
    const row = await this.store.byTokenHash(sha256(token));
    if (!row) throw notFound("invitation: not found; check the link");
    const status = invitationStatus(row, now());
    if (status !== "pending") throw new AppError("conflict", NOT_USABLE[status]);
    return row;
  }

  async preview(token: string): Promise<InvitationPreview> {
    const row = await this.pending(token);
    return { org: { name: row.org_name }, email: row.email, role: row.role as Role, expires_at: row.expires_at };
  }

  /**
   * The signed-in user accepts. The invitation is bound to its e-mail: a link forwarded to, or opened by,
   * another account does not let that account in (decisions.md, "Invitations").
   */
  async accept(token: string, user: User): Promise<void> {
    const row = await this.pending(token);
    if (row.email !== user.email) {
      throw new AppError(
        "forbidden",
        `invitation: was sent to another e-mail address; sign in as that address to accept it (you are ${user.email})`,
      );
    }
    await this.join(row, user);
  }

  /**
   * Creating an account through the link is refused, the same way whether or not the address has one: whoever
   * holds a link (its inviter too) could otherwise take an address no account has yet, and learn which have
   * one. An unusable link still says why (that is about the link, not the address).
   */
  async refuseNewAccount(token: string): Promise<never> {
    const row = await this.pending(token);
    throw new AppError(
      "forbidden",
      `invitation: accounts are not created through an invitation link; sign in as ${row.email} to accept it, or ask the server's operator for an account first`,
    );
  }

  private async join(row: InvitationRow, user: User): Promise<void> {
    const at = now();
    const by = { orgId: row.org_id, actor: `user:${user.email}` };
    const outcome = await this.store.accept(
      row.id,
      user.id,
      at,
      this.audit(by, "invitation.accepted", row.email, null, row.role, at),
    );
    if (outcome === "not_pending") throw conflict("invitation: was revoked or used meanwhile");
    if (outcome === "member") throw conflict("invitation: you are already a member of this organization");
  }

  private audit(
    by: InvitingActor,
    action: "invitation.created" | "invitation.revoked" | "invitation.accepted",
    email: string,
    before: string | null,
    after: string | null,
    at: string,
  ) {
    return { orgId: by.orgId, projectId: null, at, actor: by.actor, action, target: email, before, after };
  }
}
