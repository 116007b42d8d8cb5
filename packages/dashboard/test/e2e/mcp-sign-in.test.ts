/**
 * MCP sign-in (issue 36) with the MCP TypeScript SDK's own client and its OAuth client provider, the
 * redirect driven through the real dashboard in Chromium against the real binary: the 401 leads the client
 * to register and authorize; the browser signs in (the dashboard's own sign-in), consents (one project, the
 * read scope), and the redirect reaches this test's loopback listener; the client finishes and works. Then
 * publish_prompt is refused for the read grant, Connected apps lists the client, and revoking it there is
 * a 401 at the next request. axe on the consent screen and Connected apps; screenshots under test-results/.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, type OAuthClientProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Bootstrapped,
  chromiumAvailable,
  expectAccessible,
  launchChromium,
  openPage,
  ownerSession,
  rest,
  screenshot,
  startFreshServer,
  VIEWPORTS,
} from "./harness.js";

const PASSWORD = "owner signs in for claude";

/** A loopback listener, as a native MCP client runs one: the first request to /callback is the answer. */
async function loopback(): Promise<{ server: Server; url: string; answer: Promise<URLSearchParams> }> {
  let resolve: (params: URLSearchParams) => void = () => {};
  const answer = new Promise<URLSearchParams>((r) => {
    resolve = r;
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return response.writeHead(404).end();
    response
      .writeHead(200, { "content-type": "text/html" })
      .end("<!doctype html><title>Done</title><p>You may close this window.</p>");
    resolve(url.searchParams);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, answer };
}

/** The SDK's provider interface, kept in memory; `redirectToAuthorization` hands the URL to the test. */
function memoryProvider(redirectUrl: string) {
  const kept: Record<string, any> = {};
  let authorizationUrl: URL | undefined;
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return {
        client_name: "SDK test client",
        redirect_uris: [redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    state: () => "state-from-the-sdk",
    clientInformation: () => kept.client,
    saveClientInformation: (info) => {
      kept.client = info;
    },
    tokens: () => kept.tokens,
    saveTokens: (tokens) => {
      kept.tokens = tokens;
    },
    redirectToAuthorization: (url) => {
      authorizationUrl = url;
    },
    saveCodeVerifier: (verifier) => {
      kept.verifier = verifier;
    },
    codeVerifier: () => kept.verifier,
    saveDiscoveryState: (state) => {
      kept.discovery = state;
    },
    discoveryState: () => kept.discovery,
  };
  return { provider, kept, authorizationUrl: () => authorizationUrl };
}

describe.runIf(chromiumAvailable())("MCP sign-in through the dashboard, with the MCP SDK's client", () => {
  let server: Bootstrapped;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    server = await startFreshServer();
    await ownerSession(server, PASSWORD);
    const created = await rest(server, "POST", "/api/v2/prompts", server.key, {
      id: "greeting",
      name: "Greeting",
      sections: [{ title: "Hello", content: "Say hello to {{ name }}." }],
    });
    expect(created.status).toBe(201);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    ({ page, problems } = await openPage(context));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("signs in, consents to read, and the client works within that grant; revoking is a 401", {
    timeout: 120_000,
  }, async () => {
    const listener = await loopback();
    const mcpUrl = new URL(`${server.url}/api/v2/mcp`);
    const { provider, kept, authorizationUrl } = memoryProvider(listener.url);

    // The 401 sends the client through discovery, registration and the authorization request.
    const client = new Client({ name: "sdk-oauth-test", version: "1.0.0" });
    const first = await client
      .connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))
      .catch((e) => e);
    expect((first as Error).name).toBe("UnauthorizedError");
    expect(kept.client.client_id).toMatch(/^psc_/);
    const authorize = authorizationUrl()!;
    expect(authorize.origin + authorize.pathname).toBe(`${server.url}/oauth/authorize`);
    expect(authorize.searchParams.get("resource")).toBe(mcpUrl.href);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");

    // The browser: no session yet, so the dashboard's sign-in comes first and returns to the consent.
    await page.goto(authorize.href);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel("E-mail").fill(server.owner.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Allow SDK test client?" }).waitFor();
    expect(page.url()).toMatch(/\/oauth\/consent\?request=/);
    await expect.poll(() => page.getByText("127.0.0.1:").first().textContent()).toContain(new URL(listener.url).host);
    await screenshot(page, "mcp-consent");
    for (const [viewport, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      for (const colorScheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme });
        await expectAccessible(page, `${viewport}-${colorScheme}-mcp-consent`);
      }
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    await page.emulateMedia({ colorScheme: "light" });
    await page.getByRole("combobox", { name: "Project" }).selectOption({ index: 0 });
    await page.getByRole("radio", { name: /^read/ }).check();
    await page.getByRole("button", { name: "Allow" }).click();

    // The redirect reaches the loopback listener with the code, the state and the issuer.
    const answer = await listener.answer;
    expect(answer.get("state")).toBe("state-from-the-sdk");
    expect(answer.get("iss")).toBe(server.url);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await transport.finishAuth(answer);
    expect(kept.tokens).toMatchObject({ token_type: "Bearer", scope: "read" });

    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("get_prompt");
    const got = await client.callTool({ name: "get_prompt", arguments: { id: "greeting" } });
    expect(got.isError).toBeFalsy();
    expect((got.content as { text: string }[])[0]!.text).toContain("Say hello to {{ name }}.");
    const publish = await client.callTool({ name: "publish_prompt", arguments: { id: "greeting" } });
    expect(publish.isError).toBe(true);
    expect((publish.content as { text: string }[])[0]!.text).toBe(
      "scope: publishing needs a key with scope publish; this key has scope read",
    );

    // Account → Connected apps lists it; revoking it there ends it at the next request.
    await page.goto(`${server.url}/account`);
    const row = page.getByRole("row", { name: /SDK test client/ }).first();
    await row.waitFor();
    await expect.poll(() => row.textContent()).toContain("read");
    await screenshot(page, "mcp-connected-apps");
    await expectAccessible(page, "laptop-light-connected-apps");
    await row.getByRole("button", { name: /^Revoke SDK test client/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "No connected apps" }).count()).toBe(2);
    const revoked = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${kept.tokens.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{}",
    });
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await client.close();
    listener.server.close();
    expect(problems).toEqual([]);
  });

  it("mcp-remote, as the README's Claude Desktop entry runs it, with a bad key follows the sign-in and then lists the tools", {
    timeout: 120_000,
  }, async () => {
    // The Inspector that runs on Node.js 20 (its CLI 1.0.3) prints the 401's message and stops
    // (packages/server/test/mcp/newcomer.test.ts); mcp-remote is the third-party client here that signs in.
    const home = mkdtempSync(join(tmpdir(), "promptstore-mcp-remote-"));
    const bin = fileURLToPath(new URL("../../../../node_modules/.bin/mcp-remote", import.meta.url));
    // BROWSER=true: the test's Chromium opens the URL mcp-remote prints, not xdg-open.
    const child = spawn(bin, [`${server.url}/api/v2/mcp`, "--header", "x-api-key:ps_bad"], {
      env: { ...process.env, HOME: home, BROWSER: "true" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    try {
      send({
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e", version: "1" } },
      });
      const visit = /Please authorize this client by visiting:\s+(\S+)/;
      await expect.poll(() => visit.exec(output)?.[1], { timeout: 30_000 }).toBeDefined();
      // The page is signed in already (the first test): straight to the consent.
      await page.goto(visit.exec(output)![1]!);
      await page.getByRole("heading", { name: /^Allow / }).waitFor();
      await page.getByRole("radio", { name: /^read/ }).check();
      await page.getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => stdout.includes('"id":1'), { timeout: 30_000 }).toBe(true);
      send({ method: "notifications/initialized" });
      send({ id: 2, method: "tools/list", params: {} });
      await expect.poll(() => stdout.includes('"id":2'), { timeout: 30_000 }).toBe(true);
      expect(stdout).toContain('"name":"get_prompt"');
    } finally {
      child.kill("SIGKILL");
      rmSync(home, { recursive: true, force: true });
    }
  });
});
