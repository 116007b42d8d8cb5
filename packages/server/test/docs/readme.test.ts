import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../support/mcp.js";

const read = (path: string) => readFileSync(new URL(`../../../../${path}`, import.meta.url), "utf8");

describe("README", () => {
  it("names every MCP tool the server registers", () => {
    const readme = read("README.md");
    const tools = readme.slice(readme.indexOf("- **Tools:**"), readme.indexOf("- **Prompts:**"));
    const named = [...tools.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).filter((name) => MCP_TOOLS.includes(name!));
    expect([...new Set(named)].sort()).toEqual([...MCP_TOOLS].sort());
  });

  it("names the API key's variable one way, PROMPTSTORE_API_KEY, as the CLI and Preview do", () => {
    for (const path of ["README.md", "packages/client/README.md", "clients/python/README.md", "docs/playground.md"]) {
      expect(read(path), path).not.toMatch(/PROMPTSTORE_KEY\b/);
    }
    expect(read("README.md")).toContain("process.env.PROMPTSTORE_API_KEY!");
  });

  it("deletes only a prompt its walk-through created", () => {
    const readme = read("README.md");
    const walk = readme.slice(readme.indexOf("## Walk-through with curl"), readme.indexOf("## Environments"));
    const deleted = [...walk.matchAll(/-X DELETE \$PS\/api\/v2\/prompts\/([a-z0-9-]+)/g)].map((m) => m[1]);
    expect(deleted).toEqual(["old-bot"]);
    expect(walk).toContain('"name": "Old Bot"');
  });
});
