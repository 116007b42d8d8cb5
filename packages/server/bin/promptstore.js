#!/usr/bin/env -S node --max-old-space-size=128 --max-semi-space-size=8
// Heap limits: the server's live heap is about 30 MB, but under load V8's defaults let it grow past 180 MB
// before collecting (bench/results.md). These keep a busy server near 115 MB at the same throughput. For a
// very large store, run `node --max-old-space-size=512 bin/promptstore.js serve` instead.
// The compiled CLI lives in dist/ (built by `npm ci` through the root prepare script).
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("promptstore is not built yet: run `npm run build` in the repository root\n");
  process.exit(1);
}
const { main } = await import(entry.href);
const code = await main(process.argv);
// serve keeps running on its own; every other command ends here.
if (code !== 0 || !process.argv.slice(2).includes("serve")) process.exitCode = code;
