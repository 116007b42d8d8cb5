import { createHash, randomBytes } from "node:crypto";
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { Response, TestApp } from "./app.js";
import type { Browser } from "./dashboard.js";

export const REDIRECT = "http://127.0.0.1:4567/callback";

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** Registers a public client (RFC 7591) and returns its id. */
export async function registerClient(t: TestApp, name = "Test client", redirect = REDIRECT): Promise<string> {
  const res = await t.request("POST", "/oauth/register", {
    key: null,
    body: { client_name: name, redirect_uris: [redirect] },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.client_id;
}

export function authorizeUrl(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
  return `/oauth/authorize?${query}`;
}

/** GET /oauth/authorize; the pending request's id when it went to the consent screen. */
export async function authorize(
  t: TestApp,
  clientId: string,
  challenge: string,
  overrides: Record<string, string | undefined> = {},
): Promise<{ res: Response; requestId?: string; location?: string }> {
  const res = await t.request(
    "GET",
    authorizeUrl({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: "state-123",
      code_challenge: challenge,
      code_challenge_method: "S256",
      scope: "read write publish",
      ...overrides,
    }),
    { key: null },
  );
  const location = typeof res.headers.location === "string" ? res.headers.location : undefined;
  const requestId = location?.startsWith("/oauth/consent?")
    ? (new URLSearchParams(location.split("?")[1]).get("request") ?? undefined)
    : undefined;
  return { res, ...(requestId ? { requestId } : {}), ...(location ? { location } : {}) };
}

/** The person's Allow on the consent screen; the code from the redirect it answers. */
export async function allow(browser: Browser, requestId: string, projectId: string, scope: KeyScope) {
  const res = await browser.call("POST", `/api/dashboard/oauth/requests/${requestId}`, {
    body: { decision: "allow", project_id: projectId, scope },
  });
  const redirect = res.status === 200 ? new URL(res.body.data.redirect_to) : undefined;
  return { res, code: redirect?.searchParams.get("code") ?? undefined, redirect };
}

export function tokenRequest(t: TestApp, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return t.request("POST", "/oauth/token", {
    key: null,
    payload: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });
}

/** The whole flow: a registered client, the person's Allow, the code exchanged; the token answer. */
export async function signInClient(
  t: TestApp,
  browser: Browser,
  projectId: string,
  scope: KeyScope,
  name = "Test client",
): Promise<{ clientId: string; access: string; refresh: string }> {
  const clientId = await registerClient(t, name);
  const { verifier, challenge } = pkce();
  const { requestId } = await authorize(t, clientId, challenge);
  if (!requestId) throw new Error("authorize did not reach the consent screen");
  const { code } = await allow(browser, requestId, projectId, scope);
  if (!code) throw new Error("no code");
  const res = await tokenRequest(t, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT,
  });
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { clientId, access: res.body.access_token, refresh: res.body.refresh_token };
}

/** A JSON-RPC call to the MCP endpoint with a bearer token (stateless, current revision). */
export function mcpCall(
  t: TestApp,
  token: string | null,
  method: string,
  params: unknown = {},
  headers: Record<string, string> = {},
) {
  return t.request("POST", "/api/v2/mcp", {
    key: null,
    body: {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...(params as object),
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
    headers: {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof (params as { name?: unknown }).name === "string"
        ? { "mcp-name": (params as { name: string }).name }
        : {}),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
  });
}
