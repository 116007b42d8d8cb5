import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { MCP_TOOLS } from "../support/mcp.js";

const INSPECTOR = fileURLToPath(new URL("../../../../node_modules/.bin/mcp-inspector-cli", import.meta.url));
/**
 * The Inspector's CLI 1.0.3, the last that declares no Node.js 22 (issue 35), looks for its own package.json
 * at `../package.json` from the working directory: it is run from its build directory.
 */
const INSPECTOR_CWD = fileURLToPath(
  new URL("../../../../node_modules/@modelcontextprotocol/inspector-cli/build/", import.meta.url),
);
const run = promisify(execFile);

/** A real third-party client: the MCP Inspector's command-line mode, against the real binary. */
describe.each(DATABASES)("MCP Inspector CLI round trip ($name)", (database) => {
  let db: { url: string; drop(): Promise<void> };
  let server: RunningServer;
  let key: string;
  beforeAll(async () => {
    db = await database.create();
    server = await startServer(db.url);
    key = server.events.find((e) => e.event === "bootstrap")?.key.key;
    const res = await fetch(`${server.url}/api/v2/prompts`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name: "Greeter", markdown: "# Role\nGreet {{ name }} in {{ language }}.", publish: true }),
    });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  const inspector = async (...args: string[]) => {
    const { stdout } = await run(
      INSPECTOR,
      ["--cli", `${server.url}/api/v2/mcp`, "--transport", "http", "--header", `x-api-key: ${key}`, ...args],
      { timeout: 60_000, cwd: INSPECTOR_CWD },
    );
    return JSON.parse(stdout);
  };

  it("tools/list shows every tool", async () => {
    const result = await inspector("--method", "tools/list");
    expect(result.tools.map((t: { name: string }) => t.name).sort()).toEqual(MCP_TOOLS);
  });

  it("prompts/get fills the arguments into the production text", async () => {
    const result = await inspector(
      "--method",
      "prompts/get",
      "--prompt-name",
      "greeter",
      "--prompt-args",
      "name=Ada",
      "language=French",
    );
    expect(result.messages[0].content.text).toMatch(/^<Role>\nGreet Ada in French\.\n<\/Role>\n\n<Security>/);
  });

  it("tools/call through the inspector reaches the same service", async () => {
    const result = await inspector(
      "--method",
      "tools/call",
      "--tool-name",
      "list_versions",
      "--tool-arg",
      "id=greeter",
    );
    expect(JSON.parse(result.content[0].text).versions).toHaveLength(1);
  });
});
