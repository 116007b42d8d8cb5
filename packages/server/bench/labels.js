// npm run bench (server part, after run.js): reads by label and reads in a rollout against the production read,
// on the real binary (SQLite), interleaved rounds, medians. Writes its section of bench/results.md at the
// repository root (between the labels markers), leaving the other rows alone.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ChangeBus, openStore, PromptService } from "../dist/index.js";
import { measure } from "./lib/load.js";
import { startServer } from "./lib/processes.js";
import { benchSections, seed } from "./lib/seed.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const START = "<!-- labels bench: start -->";
const END = "<!-- labels bench: end -->";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const dir = mkdtempSync(join(tmpdir(), "promptstore-bench-labels-"));
const databaseUrl = join(dir, "bench.sqlite");
try {
  const seeded = await seed(databaseUrl, { prompts: 2, versions: 2 });
  // One prompt with staging on its latest version; the other in a 10% rollout of its latest on production.
  const store = await openStore(databaseUrl);
  const prompts = new PromptService(store, new ChangeBus(), { guardText: "GUARD" });
  const caller = {
    projectId: seeded.projectId,
    projectName: "bench",
    orgId: seeded.orgId,
    plan: "unlimited",
    actor: "cli",
    access: "publish",
  };
  const list = await prompts.list(caller);
  const [labelled, rolled] = list.prompts.map((p) => p.id);
  await prompts.publish(caller, labelled, "latest", { label: "staging" });
  await prompts.save(caller, rolled, { sections: benchSections(9) });
  await prompts.publish(caller, rolled, "latest", { percent: 10 });
  await store.close();

  const server = await startServer(databaseUrl);
  const headers = { "x-api-key": seeded.key };
  const targets = [
    ["production read", `/api/v2/prompts/${labelled}`],
    ["labelled read (?version=staging)", `/api/v2/prompts/${labelled}?version=staging`],
    ["rollout read (10%, ?assign=user-42)", `/api/v2/prompts/${rolled}?assign=user-42`],
  ];
  const runs = new Map(targets.map(([name]) => [name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, path] of targets) {
      runs
        .get(name)
        .push(await measure(`${name}, round ${round}`, { url: server.url + path, headers, pid: server.pid }));
    }
  }
  await server.stop();
  const median = (rows) => [...rows].sort((a, b) => a.rps - b.rps)[Math.floor(rows.length / 2)];
  const [production, labelRead, rolloutRead] = targets.map(([name]) => median(runs.get(name)));
  const ratio = (row) => row.rps / production.rps;
  const within = (row) => ratio(row) >= 0.9;
  const line = (name, row) =>
    `| ${name} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${(ratio(row) * 100).toFixed(0)}% |`;
  const section = `${START}
## Labels and rollouts

The real binary on SQLite, cached reads (the usual case), 50 connections, ${ROUNDS} interleaved rounds, the median
round. The labelled and the rollout read go through the same read cache; the rollout entry holds both arms and
picks one per request by its assign value (murmur3).

| Read | req/s | p50 ms | p99 ms | of the production read |
|---|---|---|---|---|
${line("Production read", production)}
${line("Labelled read (`?version=staging`)", labelRead)}
${line("Rollout read (10%, `?assign=user-42`)", rolloutRead)}

| Target | Result | |
|---|---|---|
| A labelled read within 10% of a production read | ${(ratio(labelRead) * 100).toFixed(0)}% of its req/s | ${within(labelRead) ? "met" : "MISSED"} |
| A rollout read within 10% of a production read | ${(ratio(rolloutRead) * 100).toFixed(0)}% of its req/s | ${within(rolloutRead) ? "met" : "MISSED"} |
${END}`;
  const existing = readFileSync(RESULTS, "utf8");
  const text = existing.includes(START)
    ? existing.replace(new RegExp(`${START}[\\s\\S]*${END}`), section)
    : `${existing.trimEnd()}\n\n${section}\n`;
  writeFileSync(RESULTS, text);
  console.log(section);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
