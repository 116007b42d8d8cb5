/**
 * MCP authorization (issue 36): discovery, the authorization server's flow and every refusal with its exact
 * status, through real HTTP handling on both databases.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import {
  allow,
  authorize,
  mcpCall,
  pkce,
  REDIRECT,
  registerClient,
  signInClient,
  tokenRequest,
} from "../support/oauth.js";

const BASE = "http://localhost";
const METADATA_URL = `${BASE}/.well-known/oauth-protected-resource/api/v2/mcp`;

describe.each(DATABASES)("MCP authorization ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp(database);
  });
  afterEach(async () => t.close());

  it("publishes protected resource metadata (both paths) and authorization server metadata", async () => {
    const expected = {
      resource: `${BASE}/api/v2/mcp`,
      authorization_servers: [BASE],
      scopes_supported: ["read", "write", "publish"],
      bearer_methods_supported: ["header"],
      resource_name: "Promptstore",
    };
    for (const path of ["/.well-known/oauth-protected-resource/api/v2/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await t.request("GET", path, { key: null });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
    }
    const as = await t.request("GET", "/.well-known/oauth-authorization-server", { key: null });
    expect(as.status).toBe(200);
    expect(as.body).toEqual({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/revoke`,
      scopes_supported: ["read", "write", "publish"],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it("the issuer is PROMPTSTORE_PUBLIC_URL when set", async () => {
    const configured = await testApp(database, { PROMPTSTORE_PUBLIC_URL: "https://prompts.example.com" });
    try {
      const res = await configured.request("GET", "/.well-known/oauth-protected-resource/api/v2/mcp", { key: null });
      expect(res.body.resource).toBe("https://prompts.example.com/api/v2/mcp");
      const missing = await configured.request("POST", "/api/v2/mcp", { key: null, body: {} });
      expect(missing.headers["www-authenticate"]).toBe(
        'Bearer resource_metadata="https://prompts.example.com/.well-known/oauth-protected-resource/api/v2/mcp"',
      );
    } finally {
      await configured.close();
    }
  });

  it("401 for a missing credential and for an unknown token, each with its challenge; the REST API is unchanged", async () => {
    const missing = await mcpCall(t, null, "tools/list");
    expect(missing.status).toBe(401);
    expect(missing.headers["www-authenticate"]).toBe(`Bearer resource_metadata="${METADATA_URL}"`);
    const unknown = await mcpCall(t, "psat_not-a-token", "tools/list");
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({
      success: false,
      error: "authorization: the token is unknown or revoked, or its person left the organization; sign in again",
    });
    expect(unknown.headers["www-authenticate"]).toBe(
      `Bearer resource_metadata="${METADATA_URL}", error="invalid_token", error_description="authorization: the token is unknown or revoked, or its person left the organization; sign in again"`,
    );
    // REST takes no bearer token and says nothing of OAuth.
    const rest = await t.request("GET", "/api/v2/prompts", { key: null, headers: { authorization: "Bearer x" } });
    expect(rest.status).toBe(401);
    expect(rest.headers["www-authenticate"]).toBeUndefined();
  });

  it("a read grant lists tools and reads prompts as its person; publish_prompt is refused; the audit names the client", async () => {
    await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "greeting" } });
    const editor = await member(t, "editor");
    const read = await signInClient(t, editor, t.project.projectId, "read", "Claude");
    const tools = await mcpCall(t, read.access, "tools/list");
    expect(tools.status).toBe(200);
    expect(tools.body.result.tools.map((tool: { name: string }) => tool.name)).toContain("publish_prompt");
    const got = await mcpCall(t, read.access, "tools/call", { name: "get_prompt", arguments: { id: "greeting" } });
    expect(got.body.result.isError).toBeUndefined();
    const publish = await mcpCall(t, read.access, "tools/call", {
      name: "publish_prompt",
      arguments: { id: "greeting" },
    });
    expect(publish.body.result.isError).toBe(true);
    expect(publish.body.result.content[0].text).toBe(
      "scope: publishing needs a key with scope publish; this key has scope read",
    );

    const write = await signInClient(t, editor, t.project.projectId, "write", "Claude");
    const saved = await mcpCall(t, write.access, "tools/call", {
      name: "save_prompt_version",
      arguments: { id: "greeting", markdown: "# Hello\nAgain" },
    });
    expect(saved.body.result.isError).toBeUndefined();
    const audit = await t.request("GET", "/api/v2/audit");
    expect(audit.body.data.entries[0]).toMatchObject({
      actor: `user:${editor.email} via MCP client Claude`,
      action: "prompt.saved",
    });
    const history = await t.request("GET", "/api/v2/prompts/greeting/versions");
    expect(history.body.data.versions[0].saved_by).toBe(`user:${editor.email}`);
  });

  it("a viewer may grant read and nothing more (403); consent without the CSRF token is 403", async () => {
    const viewer = await member(t, "viewer");
    const clientId = await registerClient(t);
    const { requestId } = await authorize(t, clientId, pkce().challenge);
    const publish = await allow(viewer, requestId!, t.project.projectId, "publish");
    expect(publish.res.status).toBe(403);
    expect(publish.res.body).toEqual({
      success: false,
      error: "role: viewer may not do this; it needs editor or owner",
    });
    const noCsrf = await viewer.call("POST", `/api/dashboard/oauth/requests/${requestId}`, {
      body: { decision: "allow", project_id: t.project.projectId, scope: "read" },
      csrf: null,
    });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toBe("x-csrf-token: missing or wrong CSRF token; reload the page");
    // Another organization's project is not found, as everywhere.
    const other = await t.newProject();
    expect((await allow(viewer, requestId!, other.projectId, "read")).res.status).toBe(404);
    const read = await allow(viewer, requestId!, t.project.projectId, "read");
    expect(read.res.status).toBe(200);
    expect(read.redirect?.origin + read.redirect!.pathname).toBe(REDIRECT);
    expect(read.redirect?.searchParams.get("state")).toBe("state-123");
    expect(read.redirect?.searchParams.get("iss")).toBe(BASE);
    // Answered once.
    expect((await allow(viewer, requestId!, t.project.projectId, "read")).res.status).toBe(404);
  });

  it("Deny sends access_denied with the state", async () => {
    const editor = await member(t, "editor");
    const clientId = await registerClient(t);
    const { requestId } = await authorize(t, clientId, pkce().challenge);
    const denied = await editor.call("POST", `/api/dashboard/oauth/requests/${requestId}`, {
      body: { decision: "deny" },
    });
    expect(denied.status).toBe(200);
    const url = new URL(denied.body.data.redirect_to);
    expect(url.searchParams.get("error")).toBe("access_denied");
    expect(url.searchParams.get("state")).toBe("state-123");
  });

  it("refuses before the redirect URI is known with a page, never a redirect (no open redirect)", async () => {
    const clientId = await registerClient(t);
    const unknown = await authorize(t, "psc_unknown", pkce().challenge);
    expect(unknown.res.status).toBe(400);
    expect(unknown.res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(unknown.res.body).toContain("client_id: this client is not registered with this server");
    const elsewhere = await authorize(t, clientId, pkce().challenge, { redirect_uri: "https://evil.example/cb" });
    expect(elsewhere.res.status).toBe(400);
    expect(elsewhere.location).toBeUndefined();
    expect(elsewhere.res.body).toContain("redirect_uri: https://evil.example/cb is not a redirect URI of Test client");
    // Loopback: any port, nothing else may differ.
    const otherPort = await authorize(t, clientId, pkce().challenge, {
      redirect_uri: "http://127.0.0.1:9999/callback",
    });
    expect(otherPort.requestId).toBeDefined();
    const otherPath = await authorize(t, clientId, pkce().challenge, { redirect_uri: "http://127.0.0.1:9999/other" });
    expect(otherPath.res.status).toBe(400);
  });

  it("after the redirect URI is known, refusals go back to it with the state: state, PKCE S256, resource", async () => {
    const clientId = await registerClient(t);
    const error = async (overrides: Record<string, string | undefined>) => {
      const { res, location } = await authorize(t, clientId, pkce().challenge, overrides);
      expect(res.status).toBe(302);
      const url = new URL(location!);
      return [url.searchParams.get("error"), url.searchParams.get("error_description"), url.searchParams.get("state")];
    };
    expect(await error({ state: undefined })).toEqual(["invalid_request", "state: required", null]);
    expect(await error({ code_challenge: undefined })).toEqual([
      "invalid_request",
      "code_challenge: required (PKCE)",
      "state-123",
    ]);
    expect(await error({ code_challenge_method: "plain" })).toEqual([
      "invalid_request",
      "code_challenge_method: must be S256",
      "state-123",
    ]);
    expect(await error({ response_type: "token" })).toEqual([
      "unsupported_response_type",
      "response_type: must be code",
      "state-123",
    ]);
    expect(await error({ resource: "https://other.example/mcp" })).toEqual([
      "invalid_target",
      `resource: this server issues tokens only for ${BASE}/api/v2/mcp`,
      "state-123",
    ]);
  });

  it("the code: a wrong verifier, another client, another redirect URI, reuse and expiry are each 400 invalid_grant", async () => {
    const editor = await member(t, "editor");
    const clientId = await registerClient(t);
    const otherClient = await registerClient(t, "Other");
    const code = async () => {
      const { verifier, challenge } = pkce();
      const { requestId } = await authorize(t, clientId, challenge);
      return { verifier, code: (await allow(editor, requestId!, t.project.projectId, "read")).code! };
    };
    const exchange = (fields: Record<string, string>) =>
      tokenRequest(t, { grant_type: "authorization_code", client_id: clientId, redirect_uri: REDIRECT, ...fields });
    const refused = (description: string) => ({
      success: false,
      error: "invalid_grant",
      error_description: description,
    });

    const a = await code();
    const wrongVerifier = await exchange({ code: a.code, code_verifier: pkce().verifier });
    expect([wrongVerifier.status, wrongVerifier.body]).toEqual([
      400,
      refused("code_verifier: does not match the code challenge"),
    ]);
    // The attempt spent the code.
    expect((await exchange({ code: a.code, code_verifier: a.verifier })).status).toBe(400);

    const b = await code();
    const foreign = await exchange({ code: b.code, code_verifier: b.verifier, client_id: otherClient });
    expect([foreign.status, foreign.body]).toEqual([400, refused("code: was issued to another client")]);

    const c = await code();
    const redirect = await exchange({
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: "http://127.0.0.1:4567/other",
    });
    expect([redirect.status, redirect.body]).toEqual([
      400,
      refused("redirect_uri: does not match the authorization request's"),
    ]);

    const d = await code();
    const first = await exchange({ code: d.code, code_verifier: d.verifier });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "read" });
    const reused = await exchange({ code: d.code, code_verifier: d.verifier });
    expect([reused.status, reused.body]).toEqual([400, refused("code: already used; the tokens it gave are revoked")]);
    expect((await mcpCall(t, first.body.access_token, "tools/list")).status).toBe(401);

    const e = await code();
    await t.store.db
      .updateTable("oauth_requests")
      .set({ code_expires_at: new Date(Date.now() - 1).toISOString() })
      .execute();
    const expired = await exchange({ code: e.code, code_verifier: e.verifier });
    expect([expired.status, expired.body]).toEqual([
      400,
      refused("code: expired; a code must be exchanged within 60 s"),
    ]);

    const unknown = await exchange({ code: "psac_nothing", code_verifier: e.verifier });
    expect([unknown.status, unknown.body]).toEqual([400, refused("code: unknown or expired")]);
    const grant = await tokenRequest(t, { grant_type: "password", client_id: clientId });
    expect([grant.status, grant.body.error]).toEqual([400, "unsupported_grant_type"]);
  });

  it("refresh rotates; the old refresh token again is 400 and revokes the grant", async () => {
    const editor = await member(t, "editor");
    const { clientId, access, refresh } = await signInClient(t, editor, t.project.projectId, "read");
    const refreshed = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: refresh,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(refresh);
    expect((await mcpCall(t, refreshed.body.access_token, "tools/list")).status).toBe(200);
    const otherClient = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: refreshed.body.refresh_token,
      client_id: "psc_other",
    });
    expect([otherClient.status, otherClient.body.error_description]).toEqual([
      400,
      "refresh_token: was issued to another client",
    ]);
    const again = await tokenRequest(t, { grant_type: "refresh_token", refresh_token: refresh, client_id: clientId });
    expect([again.status, again.body]).toEqual([
      400,
      {
        success: false,
        error: "invalid_grant",
        error_description: "refresh_token: already used (rotated); the grant is revoked, sign in again",
      },
    ]);
    expect((await mcpCall(t, refreshed.body.access_token, "tools/list")).status).toBe(401);
    expect((await mcpCall(t, access, "tools/list")).status).toBe(401);
  });

  it("a token for another resource is 401; an expired token is 401", async () => {
    const editor = await member(t, "editor");
    const { access } = await signInClient(t, editor, t.project.projectId, "read");
    const elsewhere = await mcpCall(t, access, "tools/list", {}, { host: "other.example" });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.error).toBe(
      `authorization: the token was issued for ${BASE}/api/v2/mcp, not for http://other.example/api/v2/mcp`,
    );
    await t.store.db
      .updateTable("oauth_tokens")
      .set({ expires_at: new Date(Date.now() - 1).toISOString() })
      .execute();
    const expired = await mcpCall(t, access, "tools/list");
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe("authorization: the token has expired; refresh it or sign in again");
    expect(expired.headers["www-authenticate"]).toContain('error="invalid_token"');
  });

  it("a person removed, or whose role no longer holds the scope, loses the token at once", async () => {
    const editor = await member(t, "editor");
    const write = await signInClient(t, editor, t.project.projectId, "write");
    const read = await signInClient(t, editor, t.project.projectId, "read");
    await t.app.accounts.changeRole(t.project.orgId, editor.userId, "viewer");
    const lowered = await mcpCall(t, write.access, "tools/list");
    expect([lowered.status, lowered.body.error]).toEqual([
      401,
      "authorization: the person's role (viewer) no longer allows scope write; sign in again",
    ]);
    expect((await mcpCall(t, read.access, "tools/list")).status).toBe(200);
    await t.app.accounts.removeMember(t.project.orgId, editor.userId);
    expect((await mcpCall(t, read.access, "tools/list")).status).toBe(401);
  });

  it("Connected apps: a person lists and revokes their own; an owner sees and revokes the organization's", async () => {
    const editor = await member(t, "editor");
    const owner = await member(t, "owner");
    const { access, clientId } = await signInClient(t, editor, t.project.projectId, "read", "Cursor");
    const mine = await editor.call("GET", "/api/dashboard/oauth/grants");
    expect(mine.body.data.grants).toEqual([
      {
        id: expect.stringMatching(/^oag_/),
        client_id: clientId,
        client_name: "Cursor",
        user_email: editor.email,
        org_id: t.project.orgId,
        project_id: t.project.projectId,
        project_name: expect.any(String),
        scope: "read",
        created_at: expect.any(String),
        last_used_at: null,
      },
    ]);
    await mcpCall(t, access, "tools/list");
    // The last use is written beside the request, not before its answer: asked again until it is there.
    await expect
      .poll(async () => (await editor.call("GET", "/api/dashboard/oauth/grants")).body.data.grants[0].last_used_at, {
        timeout: 10_000,
      })
      .toEqual(expect.any(String));
    expect((await owner.call("GET", "/api/dashboard/oauth/grants")).body.data.grants).toEqual([]);
    const org = await owner.call("GET", `/api/dashboard/oauth/grants?org=${t.project.orgId}`);
    expect(org.body.data.grants.map((g: { id: string }) => g.id)).toEqual([mine.body.data.grants[0].id]);
    expect((await editor.call("GET", `/api/dashboard/oauth/grants?org=${t.project.orgId}`)).status).toBe(403);
    const viewer = await member(t, "viewer");
    expect((await viewer.call("DELETE", `/api/dashboard/oauth/grants/${mine.body.data.grants[0].id}`)).status).toBe(
      404,
    );
    const revoked = await owner.call("DELETE", `/api/dashboard/oauth/grants/${mine.body.data.grants[0].id}`);
    expect(revoked.status).toBe(200);
    expect((await mcpCall(t, access, "tools/list")).status).toBe(401);
    expect((await editor.call("GET", "/api/dashboard/oauth/grants")).body.data.grants).toEqual([]);
  });

  it("RFC 7009 revocation by the client ends the grant", async () => {
    const editor = await member(t, "editor");
    const { access, refresh, clientId } = await signInClient(t, editor, t.project.projectId, "read");
    const res = await t.request("POST", "/oauth/revoke", {
      key: null,
      payload: new URLSearchParams({ token: refresh, client_id: clientId }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect((await mcpCall(t, access, "tools/list")).status).toBe(401);
  });

  it("registration: public clients only, checked redirect URIs, rate limited; it is no credential", async () => {
    const register = (body: unknown) => t.request("POST", "/oauth/register", { key: null, body });
    const http = await register({ redirect_uris: ["http://evil.example/cb"] });
    expect([http.status, http.body]).toEqual([
      400,
      {
        success: false,
        error: "invalid_redirect_uri",
        error_description:
          "redirect_uris[0]: http is allowed only on loopback (127.0.0.1, [::1], localhost); use https",
      },
    ]);
    const js = await register({ redirect_uris: ["javascript:alert(1)"] });
    expect(js.body.error_description).toBe("redirect_uris[0]: scheme javascript: is not allowed");
    const secret = await register({
      redirect_uris: ["https://app.example/cb"],
      token_endpoint_auth_method: "client_secret_basic",
    });
    expect(secret.status).toBe(201);
    expect(secret.body.token_endpoint_auth_method).toBe("none");
    expect(secret.body.client_secret).toBeUndefined();
    // A registered client alone reaches nothing.
    expect((await mcpCall(t, secret.body.client_id, "tools/list")).status).toBe(401);
    // Form bodies are for the token and revocation endpoints only.
    const form = await t.request("POST", "/api/v2/prompts", {
      payload: "a=b",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([form.status, form.body.error]).toEqual([415, "content-type: must be application/json"]);
    let last = secret;
    for (let i = 0; i < 20 && last.status !== 429; i++)
      last = await register({ redirect_uris: ["https://app.example/cb"] });
    expect(last.status).toBe(429);
    expect(last.headers["retry-after"]).toEqual(expect.any(String));
  });
});
