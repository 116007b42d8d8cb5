/**
 * What a newcomer meets on MCP (issues 20 and 36), with the real third-party clients the README names. A
 * bad key is the contract's 401, whose WWW-Authenticate leads OAuth clients to this server's sign-in:
 * mcp-remote starts it (the whole sign-in through it is packages/dashboard/test/e2e/mcp-sign-in.test.ts);
 * the MCP Inspector's CLI that runs on Node.js 20 (1.0.3) and the MCP TypeScript SDK v1 client without an
 * auth provider show the server's message. The tool schemas must pass
 * the Inspector's portability check. SQLite only: what is tested is what the clients see.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const BIN = (name: string) => fileURLToPath(new URL(`../../../../node_modules/.bin/${name}`, import.meta.url));
const run = promisify(execFile);
/**
 * The Inspector's CLI 1.0.3, the last that declares no Node.js 22 (issue 35), looks for its own package.json
 * at `../package.json` from the working directory: it is run from its build directory.
 */
const INSPECTOR_CWD = fileURLToPath(
  new URL("../../../../node_modules/@modelcontextprotocol/inspector-cli/build/", import.meta.url),
);

describe.each(DATABASES.filter((d) => d.name === "sqlite"))("MCP as a newcomer meets it ($name)", (database) => {
  let db: { url: string; drop(): Promise<void> };
  let server: RunningServer;
  let key: string;
  let home: string;
  let endpoint: string;
  beforeAll(async () => {
    db = await database.create();
    server = await startServer(db.url);
    key = server.events.find((e) => e.event === "bootstrap")?.key.key;
    endpoint = `${server.url}/api/v2/mcp`;
    // mcp-remote and the Inspector keep OAuth state under HOME: a throw-away one, never the user's.
    home = mkdtempSync(join(tmpdir(), "promptstore-mcp-home-"));
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const inspector = async (apiKey: string, ...args: string[]) => {
    try {
      const { stdout, stderr } = await run(
        BIN("mcp-inspector-cli"),
        ["--cli", endpoint, "--transport", "http", "--header", `x-api-key: ${apiKey}`, ...args],
        { timeout: 60_000, cwd: INSPECTOR_CWD, env: { ...process.env, HOME: home } },
      );
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
    }
  };

  it("the MCP Inspector CLI (1.0.3, the last that runs on Node.js 20) with a bad key prints the server's 401 message", {
    timeout: 60_000,
  }, async () => {
    const batch = await inspector("ps_not-a-key", "--method", "tools/list");
    expect(batch.code).toBe(1);
    expect(batch.output).toContain(
      'Failed to connect to MCP server: Streamable HTTP error: Error POSTing to endpoint: {"success":false,"error":"x-api-key: invalid API key"}',
    );
  });

  it("the MCP TypeScript SDK v1 client without an auth provider rejects with the server's message and the 401", async () => {
    const client = new Client({ name: "newcomer", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { "x-api-key": "ps_not-a-key" } },
    });
    const error = (await client.connect(transport).catch((e: unknown) => e)) as Error & { code?: number };
    expect(error.message).toContain("x-api-key: invalid API key");
    expect(error.code).toBe(401);
    await client.close();
  });

  it("mcp-remote, as the README's Claude Desktop entry runs it, follows the sign-in of a 401", {
    timeout: 30_000,
  }, async () => {
    const child = spawn(BIN("mcp-remote"), [endpoint, "--header", "x-api-key:ps_not-a-key"], {
      env: { ...process.env, HOME: home },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "newcomer", version: "1" } },
      })}\n`,
    );
    const deadline = Date.now() + 20_000;
    while (!output.includes("/oauth/authorize?") && child.exitCode === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill("SIGKILL");
    expect(output).toContain(`Discovered authorization server: ${server.url}`);
    const url = new URL(/Please authorize this client by visiting:\s+(\S+)/.exec(output)?.[1] ?? "http://missing");
    expect(url.origin + url.pathname).toBe(`${server.url}/oauth/authorize`);
    expect(url.searchParams.get("resource")).toBe(endpoint);
  });

  // The Inspector 2's `--strict` schema lint needs Node.js 22; its 1.0.3 CLI (Node.js 20, issue 35) has none,
  // so the two findings it made on tool schemas are checked here: no empty `additionalProperties`, no `type` array.
  it("a good key still works, and the tool schemas are portable", async () => {
    const { code, output } = await inspector(key, "--method", "tools/list");
    expect(code).toBe(0);
    const tools = JSON.parse(output.slice(output.indexOf("{"), output.lastIndexOf("}") + 1)) as { tools: unknown[] };
    expect(tools.tools.length).toBeGreaterThan(0);
    const text = JSON.stringify(tools);
    expect(text).not.toContain('"additionalProperties":{}');
    expect(text).not.toMatch(/"type":\[/);
  });
});
