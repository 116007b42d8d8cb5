/**
 * MCP sign-ins in the audit trail: a grant's creation (`app.connected`) and its revocation (`app.revoked`,
 * by a person in Connected apps, by the client, or by the server's security rules) are rows of the grant's
 * project, read over REST as any key with the audit scope reads them, on both databases.
 */
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { type Browser, member, newUser, signIn } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { allow, authorize, mcpCall, pkce, REDIRECT, signInClient, tokenRequest } from "../support/oauth.js";

const AT = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const ID = expect.stringMatching(/^\d+$/);

describe.each(DATABASES)("MCP sign-ins in the audit trail ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp(database);
  });
  afterEach(async () => t.close());

  /** The project's trail over REST (the test app's publish key), newest first. */
  const trail = async () => {
    const res = await t.request("GET", "/api/v2/audit");
    expect(res.status).toBe(200);
    return res.body.data.entries as { action: string }[];
  };
  const appRows = async () => (await trail()).filter((row) => row.action.startsWith("app."));
  /** The grant the person's newest sign-in made, as Connected apps lists it. */
  const newestGrant = async (person: Browser): Promise<string> =>
    (await person.call("GET", "/api/dashboard/oauth/grants")).body.data.grants[0].id;

  it("a consent that gives a client its tokens writes app.connected: the person, the client and grant, the scope", async () => {
    const before = await trail();
    const editor = await member(t, "editor");
    await signInClient(t, editor, t.project.projectId, "write", "Claude");
    const grantId = await newestGrant(editor);
    const after = await trail();
    // Exactly one new row, and it is this one.
    expect(after.slice(1)).toEqual(before);
    expect(after[0]).toEqual({
      id: ID,
      at: AT,
      actor: `user:${editor.email}`,
      action: "app.connected",
      target: `Claude (${grantId})`,
      before: null,
      after: "write",
    });
    // Another project's trail does not show it.
    const other = await t.newProject();
    const elsewhere = await t.request("GET", "/api/v2/audit", { key: other.key });
    expect(elsewhere.body.data.entries.filter((row: { action: string }) => row.action.startsWith("app."))).toEqual([]);
  });

  it("a consent whose code is never exchanged gives the client nothing and writes nothing", async () => {
    const editor = await member(t, "editor");
    const clientId = (
      await t.request("POST", "/oauth/register", {
        key: null,
        body: { client_name: "Idle", redirect_uris: [REDIRECT] },
      })
    ).body.client_id;
    const { requestId } = await authorize(t, clientId, pkce().challenge);
    expect((await allow(editor, requestId!, t.project.projectId, "read")).code).toEqual(expect.any(String));
    expect(await appRows()).toEqual([]);
  });

  it("a revocation in Connected apps writes app.revoked naming who revoked it; a second one writes nothing", async () => {
    const editor = await member(t, "editor");
    const owner = await member(t, "owner");
    const { access } = await signInClient(t, editor, t.project.projectId, "read", "Cursor");
    const grantId = await newestGrant(editor);
    const revoked = await owner.call("DELETE", `/api/dashboard/oauth/grants/${grantId}`);
    expect(revoked.status).toBe(200);
    expect((await mcpCall(t, access, "tools/list")).status).toBe(401);
    expect((await owner.call("DELETE", `/api/dashboard/oauth/grants/${grantId}`)).status).toBe(404);
    expect(await appRows()).toEqual([
      {
        id: ID,
        at: AT,
        actor: `user:${owner.email}`,
        action: "app.revoked",
        target: `Cursor (${grantId})`,
        before: "read",
        after: "revoked",
      },
      {
        id: ID,
        at: AT,
        actor: `user:${editor.email}`,
        action: "app.connected",
        target: `Cursor (${grantId})`,
        before: null,
        after: "read",
      },
    ]);
  });

  it("a reused refresh token, a reused code and the client's own revocation name the person via the client", async () => {
    const editor = await member(t, "editor");
    const revokedRow = (grantId: string, client: string, scope: string) => ({
      id: ID,
      at: AT,
      actor: `user:${editor.email} via MCP client ${client}`,
      action: "app.revoked",
      target: `${client} (${grantId})`,
      before: scope,
      after: "revoked",
    });

    // A refresh token presented after its rotation revokes the grant (RFC 9700 4.14.2).
    const first = await signInClient(t, editor, t.project.projectId, "write", "VS Code");
    const firstGrant = await newestGrant(editor);
    const refresh = { grant_type: "refresh_token", refresh_token: first.refresh, client_id: first.clientId };
    expect((await tokenRequest(t, refresh)).status).toBe(200);
    expect((await tokenRequest(t, refresh)).status).toBe(400);
    expect((await appRows())[0]).toEqual(revokedRow(firstGrant, "VS Code", "write"));
    // A rotation itself is no row: the grant did not change.
    expect((await appRows()).map((row) => row.action)).toEqual(["app.revoked", "app.connected"]);

    // The client revokes its own token (RFC 7009).
    const second = await signInClient(t, editor, t.project.projectId, "read", "Inspector");
    const secondGrant = await newestGrant(editor);
    const res = await t.request("POST", "/oauth/revoke", {
      key: null,
      payload: new URLSearchParams({ token: second.refresh, client_id: second.clientId }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect((await appRows())[0]).toEqual(revokedRow(secondGrant, "Inspector", "read"));

    // An authorization code exchanged twice: what the first exchange gave is revoked.
    const clientId = (
      await t.request("POST", "/oauth/register", {
        key: null,
        body: { client_name: "mcp-remote", redirect_uris: [REDIRECT] },
      })
    ).body.client_id;
    const { verifier, challenge } = pkce();
    const { requestId } = await authorize(t, clientId, challenge);
    const { code } = await allow(editor, requestId!, t.project.projectId, "read");
    const exchange = { grant_type: "authorization_code", code: code!, code_verifier: verifier, client_id: clientId };
    expect((await tokenRequest(t, { ...exchange, redirect_uri: REDIRECT })).status).toBe(200);
    const thirdGrant = await newestGrant(editor);
    expect((await tokenRequest(t, { ...exchange, redirect_uri: REDIRECT })).status).toBe(400);
    expect((await appRows())[0]).toEqual(revokedRow(thirdGrant, "mcp-remote", "read"));
    expect((await appRows()).map((row) => row.action)).toEqual([
      "app.revoked",
      "app.connected",
      "app.revoked",
      "app.connected",
      "app.revoked",
      "app.connected",
    ]);
  });

  /** Makes the database refuse an audit row of the given action, as a full disk or a lost connection would. */
  const refuseAuditRows = async (action: string) => {
    if (database.name === "sqlite") {
      await sql
        .raw(
          `CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log WHEN NEW.action = '${action}' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
        )
        .execute(t.store.db);
    } else {
      await sql
        .raw(
          `CREATE OR REPLACE FUNCTION refuse_audit() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql;
           CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW WHEN (NEW.action = '${action}') EXECUTE FUNCTION refuse_audit()`,
        )
        .execute(t.store.db);
    }
  };
  const allowAuditRows = () =>
    sql
      .raw(database.name === "sqlite" ? "DROP TRIGGER refuse_audit" : "DROP TRIGGER refuse_audit ON audit_log")
      .execute(t.store.db);

  it("a grant whose audit row cannot be written is neither made nor revoked (one transaction)", async () => {
    const editor = await member(t, "editor");
    await refuseAuditRows("app.connected");
    await expect(signInClient(t, editor, t.project.projectId, "read", "Claude")).rejects.toThrow(
      /token exchange failed: 500/,
    );
    expect((await editor.call("GET", "/api/dashboard/oauth/grants")).body.data.grants).toEqual([]);
    await allowAuditRows();

    const { access } = await signInClient(t, editor, t.project.projectId, "read", "Claude");
    const grantId = await newestGrant(editor);
    await refuseAuditRows("app.revoked");
    expect((await editor.call("DELETE", `/api/dashboard/oauth/grants/${grantId}`)).status).toBe(500);
    // Still live: the revocation was rolled back with its row.
    expect((await mcpCall(t, access, "tools/list")).status).toBe(200);
    await allowAuditRows();
    expect((await editor.call("DELETE", `/api/dashboard/oauth/grants/${grantId}`)).status).toBe(200);
    expect((await appRows()).map((row) => row.action)).toEqual(["app.revoked", "app.connected"]);
  });

  it("a long client name is cut in the actor, never the person, so a security revocation is always written", async () => {
    const email = `${"a".repeat(64)}@${"b".repeat(60)}.example.com`;
    const person = await signIn(t, await newUser(t, t.project.orgId, "editor", email));
    const name = "N".repeat(200);
    const { refresh, clientId } = await signInClient(t, person, t.project.projectId, "read", name);
    const grantId = await newestGrant(person);
    const exchange = { grant_type: "refresh_token", refresh_token: refresh, client_id: clientId };
    expect((await tokenRequest(t, exchange)).status).toBe(200);
    expect((await tokenRequest(t, exchange)).status).toBe(400);
    const actor = `${`user:${email} via MCP client ${name}`.slice(0, 299)}…`;
    expect(actor).toHaveLength(300);
    expect(await appRows()).toEqual([
      {
        id: ID,
        at: AT,
        actor,
        action: "app.revoked",
        target: `${name} (${grantId})`,
        before: "read",
        after: "revoked",
      },
      expect.objectContaining({ actor: `user:${email}`, action: "app.connected" }),
    ]);
    expect((await person.call("GET", "/api/dashboard/oauth/grants")).body.data.grants).toEqual([]);
  });
});
