// npm run bench (server part): how fast the binary starts. bin/promptstore.js runs one bundled file
// (dist/promptstore.js, scripts/build-bundle.js); the same code as tsc's separate modules (dist/cli/main.js)
// is started beside it for comparison. Measured from spawn to `serve`'s listening line, on a fresh SQLite
// (migrations and the first start's bootstrap) and again on the same one (a restart), and `--version` to its
// exit. Runs alternate between the two, so load on the machine falls on both alike. Writes its section of
// bench/results.md between the startup markers.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeSection } from "./lib/model-bench.js";

const START = "<!-- startup bench: start -->";
const END = "<!-- startup bench: end -->";
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 10);
const BIN = fileURLToPath(new URL("../bin/promptstore.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "promptstore-startup-"));
const MODULES = join(dir, "modules.mjs");
writeFileSync(
  MODULES,
  `const { main } = await import(${JSON.stringify(new URL("../dist/cli/main.js", import.meta.url).href)});\n` +
    "const code = await main(process.argv);\n" +
    'if (code !== 0 || !process.argv.slice(2).includes("serve")) process.exitCode = code;\n',
);
// The binary's heap flags (its shebang) for both.
const FLAGS = ["--max-old-space-size=128", "--max-semi-space-size=16"];
const ENTRIES = { bundle: BIN, modules: MODULES };

/** Milliseconds from spawn to the listening line (then the server is killed), or to exit for other commands. */
function time(entry, args, databaseUrl) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    const child = spawn(process.execPath, [...FLAGS, entry, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let listened;
    child.stdout.on("data", (c) => {
      out += c;
      if (listened === undefined && out.includes('"event":"listening"')) {
        listened = elapsed();
        child.kill("SIGKILL");
      }
    });
    child.on("exit", (code) => {
      if (listened !== undefined) resolve(listened);
      else if (code === 0) resolve(elapsed());
      else reject(new Error(`${entry} ${args.join(" ")} exited with ${code}`));
    });
  });
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const results = { bundle: { fresh: [], again: [], version: [] }, modules: { fresh: [], again: [], version: [] } };
for (let run = 0; run < RUNS; run++) {
  for (const [name, entry] of Object.entries(ENTRIES)) {
    const database = join(dir, `${name}-${run}.sqlite`);
    results[name].fresh.push(await time(entry, ["serve", "--port", "0", "--json"], database));
    results[name].again.push(await time(entry, ["serve", "--port", "0", "--json"], database));
    results[name].version.push(await time(entry, ["--version"], database));
  }
}
rmSync(dir, { recursive: true, force: true });

const row = (what, key, target) => {
  const bundle = median(results.bundle[key]);
  const modules = median(results.modules[key]);
  return `| ${what} | ${bundle.toFixed(0)} ms | ${modules.toFixed(0)} ms | ${target(bundle) ? "met" : "NOT MET"} |`;
};
writeSection(
  START,
  END,
  `${START}
## Start-up

Written by \`npm run bench\` (\`packages/server/bench/startup.js\`) on ${new Date().toISOString()}: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end. From spawn to \`serve\`'s listening line on SQLite, or to \`--version\`'s exit: the binary (one bundled file, \`dist/promptstore.js\`) beside the same code as tsc's separate modules, ${RUNS} alternating runs each, the median. A first start migrates an empty database and bootstraps it (the owner's password hashed at the standard cost).

| Start | Bundled (the binary) | Separate modules | Target: the binary in under 1 s |
|---|---|---|---|
${row("`serve`, first start", "fresh", (ms) => ms < 1000)}
${row("`serve`, restart", "again", (ms) => ms < 1000)}
${row("`--version`", "version", (ms) => ms < 1000)}
${END}`,
);
