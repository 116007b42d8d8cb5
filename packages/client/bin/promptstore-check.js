#!/usr/bin/env node
// promptstore-check <dir>: exit 1 when production on the server differs from <dir>/promptstore.lock. The CI
// guard of README.md ("Guard production from CI"), shipped with the client so that an application's own
// repository can run it with nothing but Node.js: `promptstore check` of the server's CLI decides the same way.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { describeProductionDifferences, Promptstore, PromptstoreError, productionDifferences } from "../dist/index.js";

const USAGE =
  "usage: promptstore-check <dir> [--url URL] [--key KEY] [--json]  (or PROMPTSTORE_URL, PROMPTSTORE_API_KEY)";

function fail(message, json) {
  if (json) console.log(JSON.stringify({ error: message }));
  else console.error(`error: ${message}`);
  process.exit(1);
}

let args;
try {
  args = parseArgs({
    allowPositionals: true,
    options: { url: { type: "string" }, key: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean" } },
  });
} catch (error) {
  fail(`${error.message}\n${USAGE}`, false);
}
const { values, positionals } = args;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const json = !!values.json;
if (positionals.length !== 1) fail(USAGE, json);
const dir = positionals[0];
const url = values.url ?? process.env.PROMPTSTORE_URL;
const key = values.key ?? process.env.PROMPTSTORE_API_KEY;
if (!url) fail("no server: pass --url or set PROMPTSTORE_URL", json);
if (!key) fail("no API key: pass --key or set PROMPTSTORE_API_KEY", json);

let text;
try {
  text = await readFile(join(dir, "promptstore.lock"), "utf8");
} catch (error) {
  if (error.code === "ENOENT") fail(`${dir} holds no promptstore.lock: make it with promptstore pull ${dir}`, json);
  throw error;
}
let document;
try {
  document = JSON.parse(text);
} catch {
  fail("promptstore.lock: is not valid JSON", json);
}
if (document?.lockfile_version !== 1 || typeof document.prompts !== "object" || document.prompts === null) {
  fail("promptstore.lock: not a lockfile of version 1", json);
}
const lock = new Map(Object.entries(document.prompts).map(([id, entry]) => [id, entry?.production ?? null]));

const client = new Promptstore({ baseUrl: url, apiKey: key, mode: "none" });
const prompts = [];
try {
  for await (const prompt of client.listAll()) prompts.push(prompt);
} catch (error) {
  fail(error instanceof PromptstoreError ? error.message : String(error), json);
}
const differences = productionDifferences(lock, prompts);
if (json) console.log(JSON.stringify({ ok: differences.length === 0, differences }));
else
  console.log(
    differences.length === 0 ? "production matches promptstore.lock" : describeProductionDifferences(differences),
  );
if (differences.length > 0) {
  if (!json) console.error(`error: production differs from promptstore.lock for ${differences.length} prompt(s)`);
  process.exit(1);
}
