#!/usr/bin/env node
// Builds the `promptstore` command of this package (cli/, bin/promptstore.js) into dist/cli/: one ES module
// per command group, with everything it uses from @promptstore/core, zod, yaml and diff bundled in, so that
// the package keeps no runtime dependency (docs/decisions.md, issue 35). `--help` loads main.js alone.
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const client = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(client, "dist", "cli");
rmSync(out, { recursive: true, force: true });
await build({
  input: { main: join(client, "cli", "main.ts") },
  platform: "node",
  // Node.js's own modules stay imports; everything else is bundled.
  external: [/^node:/],
  // The source map stays out of the package; a stack trace is never shown to the user anyway.
  output: { dir: out, format: "esm", entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js", minify: true },
  logLevel: "warn",
});
// The server's binary hands its HTTP commands to this module (packages/server/src/cli/main.ts).
writeFileSync(
  join(out, "main.d.ts"),
  `export declare const COMMAND_WORDS: string[];
export declare const COMMANDS: { name: string; args: string[]; summary: string }[];
export declare function main(argv: string[]): Promise<number>;
`,
);
