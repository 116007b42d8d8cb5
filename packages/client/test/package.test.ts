/**
 * The package runs wherever `fetch` does (Node.js 20+, Bun, Deno, browsers, edge runtimes): no runtime
 * dependency, no Node.js module or global in its source, ESM with type declarations.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

describe("@promptstore/client as published", () => {
  test("no runtime dependencies; ESM with types; dist and the bins are published; MIT; no side effects", () => {
    expect(pkg.name).toBe("@promptstore/client");
    expect(pkg.version).toBe("0.1.0");
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies ?? {}).toEqual({});
    expect(pkg.type).toBe("module");
    // ./cli: the promptstore command's code (dist/cli, bundled at build time), which the server's binary runs too.
    expect(pkg.exports).toEqual({
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./cli": { types: "./dist/cli/main.d.ts", default: "./dist/cli/main.js" },
    });
    // bin/ holds promptstore (issue 35) and promptstore-check, the CI guard (Node.js only, outside the library).
    expect(pkg.files).toEqual(["dist", "bin"]);
    expect(pkg.bin).toEqual({
      promptstore: "./bin/promptstore.js",
      "promptstore-check": "./bin/promptstore-check.js",
    });
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(join(ROOT, "LICENSE"), "utf8")).toMatch(/^MIT License/);
    expect(pkg.sideEffects).toBe(false);
  });

  test("the source uses no Node.js module or global", () => {
    const files = sources(join(ROOT, "src"));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      // Code only: the TSDoc examples may well show Node.js (`process.env.KEY`).
      const text = readFileSync(file, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, "");
      expect(text, file).not.toMatch(/from\s+["']node:|require\(|\bprocess\.|\bBuffer\b|\bimport\(["'](?!\.)/);
      // Relative imports only, within src/ or its folders: no package at run time.
      for (const [, specifier] of text.matchAll(/from\s+["']([^"']+)["']/g)) {
        expect(specifier, file).toMatch(/^\.\.?\//);
        expect(resolve(dirname(file), specifier ?? "").startsWith(join(ROOT, "src") + sep), file).toBe(true);
      }
    }
  });

  test("the source compiles with the web platform's types alone (no @types/node)", async () => {
    const tsc = join(ROOT, "../../node_modules/typescript/bin/tsc");
    await expect(
      run(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--noEmit"]),
    ).resolves.toBeDefined();
  });
});
