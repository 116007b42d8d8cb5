#!/usr/bin/env node
// promptstore: the git workflow (pull, status, diff, push, check, export, import), labels and release requests,
// over HTTP with an API key (README.md, "Prompts in git"). Built by `npm run build` into dist/cli/ with what
// it uses bundled in: the package has no runtime dependency. Running a server is the server's own command.
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("promptstore is not built yet: run `npm run build` in the repository root\n");
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
