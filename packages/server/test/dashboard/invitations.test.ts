import { describe, expect, it } from "vitest";
import { InvitationStore } from "../../src/store/invitations.js";
import { useTestApp } from "../support/app.js";
import { type Browser, browser, member, newUser, PASSWORD, sessionCookie, signIn } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

const invitationsOf = (orgId: string) => `/api/dashboard/orgs/${orgId}/invitations`;
const anonymous = (
  t: ReturnType<typeof useTestApp>,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
) => t.request("POST", url, { key: null, body, headers });

describe.each(DATABASES)("invitations ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_INVITATION_DAYS: 7 });

  async function invite(owner: Browser, email: string, role = "editor") {
    const res = await owner.call("POST", invitationsOf(t.project.orgId), { body: { email, role } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; token: string; link: string; expires_at: string; created_at: string };
  }

  it("an existing account sees nothing until it accepts; then it is a member with the invited role", async () => {
    const owner = await member(t, "owner");
    const elsewhere = await t.newProject();
    const email = await newUser(t, elsewhere.orgId, "owner");
    const invitee = await signIn(t, email);
    const created = await invite(owner, email, "viewer");
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(7 * 86_400_000);
    expect(created.link).toBe(`/invite#${created.token}`);
    expect((await invitee.call("GET", "/api/dashboard/session")).body.data.memberships).toHaveLength(1);
    expect((await invitee.call("GET", `/api/dashboard/projects/${t.project.projectId}/prompts`)).status).toBe(404);

    const preview = await anonymous(t, "/api/dashboard/invitations/preview", { token: created.token });
    expect(preview.body).toEqual({
      success: true,
      data: { org: { name: expect.any(String) }, email, role: "viewer", expires_at: created.expires_at },
    });
    const accepted = await invitee.call("POST", "/api/dashboard/invitations/accept", {
      body: { token: created.token },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.memberships.map((m: any) => [m.org.id, m.role])).toContainEqual([
      t.project.orgId,
      "viewer",
    ]);
    expect((await invitee.call("GET", `/api/dashboard/projects/${t.project.projectId}/prompts`)).status).toBe(200);
    // Used up: a second acceptance, or a preview, says so.
    const again = await invitee.call("POST", "/api/dashboard/invitations/accept", { body: { token: created.token } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, error: "invitation: was already accepted" });
    const listed = await owner.call("GET", invitationsOf(t.project.orgId));
    expect(listed.body.data.invitations).toEqual([
      {
        id: created.id,
        email,
        role: "viewer",
        invited_by: `user:${owner.email}`,
        created_at: created.created_at,
        expires_at: created.expires_at,
        status: "accepted",
        accepted_at: expect.any(String),
        revoked_at: null,
      },
    ]);
  });

  it("a new e-mail creates its account through the link, with its own password, and is signed in", async () => {
    const owner = await member(t, "owner");
    const created = await invite(owner, "Newcomer@Example.com", "editor");
    const short = await anonymous(t, "/api/dashboard/invitations/account", { token: created.token, password: "short" });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ success: false, error: "password: must be at least 12 characters" });
    const res = await anonymous(t, "/api/dashboard/invitations/account", {
      token: created.token,
      password: "my chosen passphrase",
    });
    expect(res.status).toBe(201);
    expect(res.body.data.user).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: "newcomer@example.com",
      must_change_password: false,
    });
    expect(res.body.data.memberships.map((m: any) => [m.org.id, m.role])).toEqual([[t.project.orgId, "editor"]]);
    const b = browser(t, "newcomer@example.com", res.body.data.user.id, sessionCookie(res)!, res.body.data.csrf_token);
    expect((await b.call("GET", `/api/dashboard/projects/${t.project.projectId}/prompts`)).status).toBe(200);
    expect((await signIn(t, "newcomer@example.com", "my chosen passphrase")).email).toBe("newcomer@example.com");
    // The password is stored hashed; the invitation only as a hash of its token.
    const row = await t.store.db.selectFrom("invitations").selectAll().executeTakeFirstOrThrow();
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(created.token);
  });

  it("creating an account through the link for an e-mail that has one is refused: sign in instead", async () => {
    const owner = await member(t, "owner");
    const email = await newUser(t, (await t.newProject()).orgId, "viewer");
    const created = await invite(owner, email);
    const res = await anonymous(t, "/api/dashboard/invitations/account", {
      token: created.token,
      password: "someone else's try",
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      error: "email: an account with this e-mail address exists; sign in with it to accept the invitation",
    });
    expect((await signIn(t, email, PASSWORD)).email).toBe(email);
  });

  it("is bound to its e-mail: another signed-in account cannot accept it", async () => {
    const owner = await member(t, "owner");
    const created = await invite(owner, "intended@example.com");
    const other = await signIn(t, await newUser(t, (await t.newProject()).orgId, "owner"));
    const res = await other.call("POST", "/api/dashboard/invitations/accept", { body: { token: created.token } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      success: false,
      error: `invitation: was sent to another e-mail address; sign in as that address to accept it (you are ${other.email})`,
    });
    expect((await other.call("GET", "/api/dashboard/session")).body.data.memberships).toHaveLength(1);
    expect((await owner.call("GET", invitationsOf(t.project.orgId))).body.data.invitations[0].status).toBe("pending");
  });

  it("revoked and expired invitations do not open; unknown tokens are not found", async () => {
    const owner = await member(t, "owner");
    const created = await invite(owner, "revoked@example.com");
    const revoked = await owner.call("DELETE", `${invitationsOf(t.project.orgId)}/${created.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id: created.id, status: "revoked", revoked_at: expect.any(String) });
    const account = await anonymous(t, "/api/dashboard/invitations/account", {
      token: created.token,
      password: "a long passphrase",
    });
    expect(account.status).toBe(409);
    expect(account.body).toEqual({ success: false, error: "invitation: was revoked; ask for a new one" });
    expect((await owner.call("DELETE", `${invitationsOf(t.project.orgId)}/${created.id}`)).status).toBe(409);

    const old = await invite(owner, "late@example.com");
    await t.store.db
      .updateTable("invitations")
      .set({ expires_at: "2020-01-01T00:00:00.000Z" })
      .where("id", "=", old.id)
      .execute();
    const late = await anonymous(t, "/api/dashboard/invitations/preview", { token: old.token });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ success: false, error: "invitation: has expired; ask for a new one" });
    const statuses = (await owner.call("GET", invitationsOf(t.project.orgId))).body.data.invitations.map((i: any) => [
      i.email,
      i.status,
    ]);
    expect(statuses).toEqual([
      ["late@example.com", "expired"],
      ["revoked@example.com", "revoked"],
    ]);
    const unknown = await anonymous(t, "/api/dashboard/invitations/preview", { token: "A".repeat(43) });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, error: "invitation: not found; check the link" });
    const malformed = await anonymous(t, "/api/dashboard/invitations/preview", { token: "nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ success: false, error: "token: is not an invitation token" });
  });

  it("the store's accept of an invitation revoked after the service's check joins nobody", async () => {
    // The service checked the invitation while it was pending; the owner revokes it before the accept
    // lands. The accept's own condition (revoked_at IS NULL, in its transaction) is what refuses it then.
    const owner = await member(t, "owner");
    const email = await newUser(t, (await t.newProject()).orgId, "viewer");
    const invitee = await signIn(t, email);
    const created = await invite(owner, email, "editor");
    expect((await owner.call("DELETE", `${invitationsOf(t.project.orgId)}/${created.id}`)).status).toBe(200);
    const auditBefore = await t.store.db.selectFrom("audit_log").select("id").execute();
    const at = new Date().toISOString();
    const outcome = await new InvitationStore(t.store.db).accept(created.id, invitee.userId, at, {
      orgId: t.project.orgId,
      projectId: null,
      at,
      actor: `user:${email}`,
      action: "invitation.accepted",
      target: email,
      before: null,
      after: "editor",
    });
    expect(outcome).toBe("not_pending");
    const memberships = await t.store.db
      .selectFrom("memberships")
      .select("org_id")
      .where("user_id", "=", invitee.userId)
      .execute();
    expect(memberships.map((m) => m.org_id)).not.toContain(t.project.orgId);
    expect(memberships).toHaveLength(1);
    const row = await t.store.db
      .selectFrom("invitations")
      .select(["accepted_at", "accepted_by", "revoked_at"])
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ accepted_at: null, accepted_by: null, revoked_at: expect.any(String) });
    expect(await t.store.db.selectFrom("audit_log").select("id").execute()).toHaveLength(auditBefore.length);
    expect((await invitee.call("GET", `/api/dashboard/projects/${t.project.projectId}/prompts`)).status).toBe(404);
  });

  it("only owners invite, list and revoke; a member cannot be invited twice", async () => {
    const owner = await member(t, "owner");
    const editor = await member(t, "editor");
    const refused = await editor.call("POST", invitationsOf(t.project.orgId), {
      body: { email: "x@example.com", role: "viewer" },
    });
    expect(refused.status).toBe(403);
    expect((await editor.call("GET", invitationsOf(t.project.orgId))).status).toBe(403);
    const twice = await owner.call("POST", invitationsOf(t.project.orgId), {
      body: { email: editor.email, role: "viewer" },
    });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({
      success: false,
      error: `email: ${editor.email} is already a member of this organization`,
    });
    const bad = await owner.call("POST", invitationsOf(t.project.orgId), {
      body: { email: "x@example.com", role: "god" },
    });
    expect(bad.body).toEqual({ success: false, error: "role: must be owner, editor or viewer" });
  });

  it("a preview or an account creation posted from another origin is refused", async () => {
    const owner = await member(t, "owner");
    const created = await invite(owner, "cross@example.com");
    const res = await anonymous(
      t,
      "/api/dashboard/invitations/account",
      { token: created.token, password: "a long passphrase" },
      { origin: "https://evil.example.com" },
    );
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: "origin: is not this server" });
  });

  it("creation, revocation and acceptance are in the audit trail", async () => {
    const owner = await member(t, "owner");
    const accepted = await invite(owner, "joins@example.com", "viewer");
    const revoked = await invite(owner, "never@example.com", "editor");
    await owner.call("DELETE", `${invitationsOf(t.project.orgId)}/${revoked.id}`);
    await anonymous(t, "/api/dashboard/invitations/account", { token: accepted.token, password: "joining passphrase" });
    const trail = await owner.call("GET", `/api/dashboard/projects/${t.project.projectId}/audit`);
    expect(
      trail.body.data.entries
        .filter((e: any) => e.action.startsWith("invitation."))
        .map((e: any) => [e.actor, e.action, e.target, e.before, e.after]),
    ).toEqual([
      ["user:joins@example.com", "invitation.accepted", "joins@example.com", null, "viewer"],
      [`user:${owner.email}`, "invitation.revoked", "never@example.com", "editor", "revoked"],
      [`user:${owner.email}`, "invitation.created", "never@example.com", null, "editor"],
      [`user:${owner.email}`, "invitation.created", "joins@example.com", null, "viewer"],
    ]);
  });
});
