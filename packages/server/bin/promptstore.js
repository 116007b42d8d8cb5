#!/usr/bin/env -S node --max-old-space-size=128 --max-semi-space-size=16
// Heap limits: the server's live heap is about 30 MB, but under load V8's defaults let the old space grow past
// 180 MB before collecting (bench/results.md); 128 MB keeps a busy server under 150 MB. Semi-spaces of 16 MB,
// not 8: with 8, uncached reads spent 10 µs a request in the collector instead of 1 (--trace-gc over 50 000
// reads), for about 12 MB more resident memory. For a very large store, run
// `node --max-old-space-size=512 bin/promptstore.js serve` instead.
// The compiled CLI lives in dist/, bundled into one file (scripts/build-bundle.js; built by `npm ci` through the
// root prepare script).
import { existsSync } from "node:fs";

const entry = new URL("../dist/promptstore.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("promptstore is not built yet: run `npm run build` in the repository root\n");
  process.exit(1);
}
const { main } = await import(entry.href);
const code = await main(process.argv);
// serve keeps running on its own; every other command ends here.
if (code !== 0 || !process.argv.slice(2).includes("serve")) process.exitCode = code;
