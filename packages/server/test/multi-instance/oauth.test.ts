/**
 * MCP sign-in behind a load balancer: two instances on one PostgreSQL database, each step of the flow on
 * either one. A token issued by one is accepted by the other, and a revocation on one is a 401 on the other
 * at its next request (tokens are read from the database on every request, never cached).
 */
import { describe, expect, it } from "vitest";
import { DATABASES } from "../support/databases.js";
import { pkce } from "../support/oauth.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");
const PUBLIC = "https://prompts.example.com";
const REDIRECT = "http://127.0.0.1:4567/callback";

describe.runIf(postgres)("MCP OAuth tokens across two instances", () => {
  const ctx = useTwoInstances(postgres!, { PROMPTSTORE_PUBLIC_URL: PUBLIC });

  const form = (instance: number, path: string, fields: Record<string, string>) =>
    fetch(`${ctx.urls[instance]}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });
  const mcp = (instance: number, token: string) =>
    fetch(`${ctx.urls[instance]}/api/v2/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lb", version: "1" } },
      }),
    });

  it("a token from one instance works on the other; a revocation on one is a 401 on the other at once", async () => {
    const a = ctx.apps[0]!;
    const org = await a.tenants.createOrganization("people", "unlimited");
    const project = await a.tenants.createProject(org.id, "prompts");
    const created = await a.accounts.createUser("editor@example.com", "correct horse battery staple");
    await a.accounts.store.addMembership(org.id, created!.user.id, "editor");
    const session = await fetch(`${ctx.urls[1]}/api/dashboard/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "editor@example.com", password: "correct horse battery staple" }),
    });
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    const csrf = ((await session.json()) as any).data.csrf_token as string;
    const dashboard = (instance: number, method: string, path: string, body?: unknown) =>
      fetch(`${ctx.urls[instance]}${path}`, {
        method,
        headers: { cookie, "x-csrf-token": csrf, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });

    const registered = await fetch(`${ctx.urls[0]}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Claude", redirect_uris: [REDIRECT] }),
    });
    const clientId = ((await registered.json()) as any).client_id as string;
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: "s",
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${PUBLIC}/api/v2/mcp`,
    });
    const authorized = await fetch(`${ctx.urls[1]}/oauth/authorize?${query}`, { redirect: "manual" });
    expect(authorized.status).toBe(302);
    const requestId = new URL(authorized.headers.get("location")!, PUBLIC).searchParams.get("request")!;
    const allowed = await dashboard(0, "POST", `/api/dashboard/oauth/requests/${requestId}`, {
      decision: "allow",
      project_id: project.id,
      scope: "write",
    });
    expect(allowed.status).toBe(200);
    const redirect = new URL(((await allowed.json()) as any).data.redirect_to);
    expect(redirect.searchParams.get("iss")).toBe(PUBLIC);
    const tokens = await form(1, "/oauth/token", {
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code")!,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: `${PUBLIC}/api/v2/mcp`,
    });
    expect(tokens.status).toBe(200);
    const { access_token: access } = (await tokens.json()) as { access_token: string };

    expect((await mcp(0, access)).status).toBe(200);
    expect((await mcp(1, access)).status).toBe(200);

    const grants = await dashboard(0, "GET", "/api/dashboard/oauth/grants");
    const grantId = ((await grants.json()) as any).data.grants[0].id as string;
    expect((await dashboard(1, "DELETE", `/api/dashboard/oauth/grants/${grantId}`)).status).toBe(200);
    const refused = await mcp(0, access);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/api/v2/mcp", error="invalid_token", error_description="authorization: the token is unknown or revoked, or its person left the organization; sign in again"`,
    );
    expect((await mcp(1, access)).status).toBe(401);
  });
});
