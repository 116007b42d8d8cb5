import { describe, expect, it } from "vitest";
import { InvitationStore } from "../../src/store/accounts/invitations.js";
import { useTestApp } from "../support/app.js";
import { type Browser, member, newUser, sessionCookie, signIn, signInRequest } from "../support/dashboard.js";
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

  it("a link tells one organization nothing about another's accounts and takes no address", async () => {
    // Organization B's owner invites an address that is an account of organization A, and one that is none.
    const ownerB = await member(t, "owner");
    const orgA = await t.newProject();
    const existing = await newUser(t, orgA.orgId, "owner", "known@example.com");
    const toExisting = await invite(ownerB, existing, "viewer");
    const toNew = await invite(ownerB, "nobody-yet@example.com", "viewer");
    // The owner holds both links. Every answer to them has the same shape whether the address has an
    // account or not: the preview, and the refusal to create an account (the address aside).
    const previews = await Promise.all(
      [toExisting, toNew].map((i) => anonymous(t, "/api/dashboard/invitations/preview", { token: i.token })),
    );
    expect(previews.map((p) => [p.status, { ...p.body.data, email: "*", expires_at: "*" }])).toEqual([
      [200, { org: { name: expect.any(String) }, email: "*", role: "viewer", expires_at: "*" }],
      [200, { org: { name: expect.any(String) }, email: "*", role: "viewer", expires_at: "*" }],
    ]);
    const tries = await Promise.all(
      [toExisting, toNew].map((i) =>
        anonymous(t, "/api/dashboard/invitations/account", { token: i.token, password: "the owner's own pick" }),
      ),
    );
    expect(tries.map((r) => [r.status, r.body, sessionCookie(r)])).toEqual(
      ["known@example.com", "nobody-yet@example.com"].map((email) => [
        403,
        {
          success: false,
          error: `invitation: accounts are not created through an invitation link; sign in as ${email} to accept it, or ask the server's operator for an account first`,
        },
        undefined,
      ]),
    );
    // No address was taken: none made for the new one, the existing one's password unchanged.
    expect(await t.app.accounts.store.findUserByEmail("nobody-yet@example.com")).toBeUndefined();
    expect((await signInRequest(t, "nobody-yet@example.com", "the owner's own pick")).status).toBe(401);
    expect((await signInRequest(t, existing, "the owner's own pick")).status).toBe(401);
    // Both stay pending, and only the address's own session joins through its link.
    expect(
      (await ownerB.call("GET", invitationsOf(t.project.orgId))).body.data.invitations.map((i: any) => i.status),
    ).toEqual(["pending", "pending"]);
    const owner = await signIn(t, existing);
    expect(
      (await owner.call("POST", "/api/dashboard/invitations/accept", { body: { token: toExisting.token } })).status,
    ).toBe(200);
    expect(
      (await ownerB.call("POST", "/api/dashboard/invitations/accept", { body: { token: toNew.token } })).status,
    ).toBe(403);
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
    const joins = await signIn(t, await newUser(t, (await t.newProject()).orgId, "viewer", "joins@example.com"));
    await joins.call("POST", "/api/dashboard/invitations/accept", { body: { token: accepted.token } });
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
