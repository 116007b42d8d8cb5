import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../../src/config.js";

const read = (path: string) => readFileSync(new URL(`../../../../${path}`, import.meta.url), "utf8");

/** Variables named in the first column of a Markdown table: "| `A`, `B` | …". */
function tableVariables(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split("\n")) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1] ?? "";
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1] as string);
  }
  return names;
}

describe("docs/configuration.md", () => {
  it("has a row for every variable config.ts reads, and none it does not", () => {
    const documented = tableVariables(read("docs/configuration.md"));
    expect([...documented].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it("is linked from the README, whose short table names only real variables", () => {
    const readme = read("README.md");
    expect(readme).toContain("(docs/configuration.md)");
    expect(readme).toContain("(docs/operations.md)");
    const configuration = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("## Operations"));
    expect(tableVariables(configuration).size).toBeGreaterThan(5);
    for (const name of tableVariables(configuration)) expect(CONFIG_VARIABLES).toContain(name);
  });
});
