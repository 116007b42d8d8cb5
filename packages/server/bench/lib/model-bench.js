// What the two model benches (playground.js, hostile-provider.js) share: a connection of the seeded project to
// the tests' OpenAI stand-in, added with the real binary, and their section of bench/results.md written between
// its markers.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const BIN = fileURLToPath(new URL("../../bin/promptstore.js", import.meta.url));
const RESULTS = fileURLToPath(new URL("../../../../bench/results.md", import.meta.url));

/** `promptstore connection add` for the project, to the stand-in at `model` ({ baseUrl, apiKey }); its id. */
export async function addConnection(databaseUrl, env, projectId, name, model) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      BIN,
      "connection",
      "add",
      projectId,
      "--name",
      name,
      "--base-url",
      model.baseUrl,
      "--api-key-env",
      "BENCH_MODEL_KEY",
      "--json",
    ],
    { env: { ...process.env, ...env, DATABASE_URL: databaseUrl, BENCH_MODEL_KEY: model.apiKey } },
  );
  return JSON.parse(stdout).id;
}

/** Replaces the section between `start` and `end` in bench/results.md (appends it the first time), and prints it. */
export function writeSection(start, end, section) {
  const results = readFileSync(RESULTS, "utf8");
  const from = results.indexOf(start);
  const to = results.indexOf(end);
  writeFileSync(
    RESULTS,
    from === -1
      ? `${results.trimEnd()}\n\n${section}\n`
      : `${results.slice(0, from)}${section}${results.slice(to + end.length)}`,
  );
  console.log(section);
}
