#!/usr/bin/env node
// Builds the clients this server hands out under /sdk/ (src/http/routes/sdk.ts): the TypeScript client as the
// tarball `npm pack` makes, and the Python client as a wheel made by its own build backend. Run by
// `npm run build` after the client package is built; sdk/manifest.json lists what was made.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const server = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(server, "..", "..");
const out = join(server, "sdk");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const entries = [];
const client = join(repo, "packages", "client");
const pkg = JSON.parse(readFileSync(join(client, "package.json"), "utf8"));
const packed = JSON.parse(
  execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: client, encoding: "utf8" }),
);
entries.push({
  name: pkg.name,
  language: "typescript",
  version: pkg.version,
  file: packed[0].filename,
  needs: "ESM only; Node.js 20+, Bun, Deno, browsers and edge runtimes; no runtime dependencies",
});

// The wheel needs a Python 3 to build; a machine without one serves the TypeScript client alone.
const python = join(repo, "clients", "python");
try {
  const wheel = execFileSync("python3", [join(python, "build_backend", "promptstore_build.py"), out], {
    encoding: "utf8",
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  }).trim();
  const version = readFileSync(join(python, "pyproject.toml"), "utf8").match(/^version = "([^"]+)"/m)?.[1];
  entries.push({
    name: "promptstore",
    language: "python",
    version,
    file: wheel,
    needs: "Python 3.9+; the standard library only",
  });
} catch (error) {
  console.warn(`build-sdk: no Python wheel (${error.message.split("\n")[0]}); /sdk/ serves the TypeScript client only`);
}
writeFileSync(join(out, "manifest.json"), `${JSON.stringify({ clients: entries }, null, 2)}\n`);
console.log(`build-sdk: ${entries.map((e) => e.file).join(", ")}`);
