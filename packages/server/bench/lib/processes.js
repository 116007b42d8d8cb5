import { fork, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/promptstore.js", import.meta.url));
/** The Node flags of the binary's shebang, which the counting server runs with too. */
export const BIN_NODE_FLAGS = (readFileSync(BIN, "utf8").split("\n")[0] ?? "")
  .split(" ")
  .filter((w) => w.startsWith("--"));

function waitForLine(child, predicate, what) {
  return new Promise((resolve, reject) => {
    let buffer = "";
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${stderr}`)), 30_000);
    child.once("exit", (code) => reject(new Error(`${what} exited with ${code}: ${stderr}`)));
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      for (const line of buffer.split("\n").slice(0, -1)) {
        const found = predicate(line);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      }
      buffer = buffer.slice(buffer.lastIndexOf("\n") + 1);
    });
  });
}

function handle(child, url) {
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** PostgreSQL needs the server's secret key given (no key file beside it); the bench uses a fixed one. */
export function secretKeyEnv(databaseUrl) {
  return databaseUrl.startsWith("postgres")
    ? { PROMPTSTORE_SECRET_KEY: "be11c4be11c4be11c4be11c4be11c4be11c4be11c4be11c4be11c4be11c4be11" }
    : {};
}

/**
 * The real server, as users run it: the `promptstore serve` binary, with the Node flags of its shebang, or
 * `node <nodeFlags> bin/promptstore.js serve` when `nodeFlags` are given (as its shebang tells a big store's
 * operator to run it). `events` holds what it printed at start-up (`bootstrap` on an empty database, then
 * `listening`).
 */
export async function startServer(databaseUrl, env = {}, { nodeFlags } = {}) {
  const [command, args] = nodeFlags ? [process.execPath, [...nodeFlags, BIN]] : [BIN, []];
  const child = spawn(command, [...args, "serve", "--port", "0", "--json"], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", ...secretKeyEnv(databaseUrl), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events = [];
  const url = await waitForLine(
    child,
    (line) => {
      if (!line.startsWith('{"event"')) return null;
      const event = JSON.parse(line);
      events.push(event);
      return event.event === "listening" ? event.url : null;
    },
    "promptstore",
  );
  let stderr = "";
  child.stderr.on("data", (c) => {
    stderr = (stderr + c).slice(-20_000);
  });
  // BENCH_SERVER_OUTPUT=<file> keeps everything the server prints (with --trace-gc in BENCH_SERVER_NODE_FLAGS:
  // every collection and its pause).
  const output = process.env.BENCH_SERVER_OUTPUT;
  if (output) child.stdout.on("data", (c) => appendFileSync(output, c));
  return {
    ...handle(child, url),
    events,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    stderr: () => stderr,
  };
}

/**
 * The app in a process that reports its database read counter (bench/lib/counting-server.js), with the
 * binary's heap flags. `reads()` asks it for the count.
 */
export async function startCountingServer(databaseUrl, env = {}) {
  const child = fork(fileURLToPath(new URL("./counting-server.js", import.meta.url)), [], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", ...secretKeyEnv(databaseUrl), ...env },
    execArgv: BIN_NODE_FLAGS,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const url = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`counting server exited with ${code}`)));
    child.once("message", (message) => resolve(message.url));
  });
  const reads = () =>
    new Promise((resolve) => {
      child.once("message", (message) => resolve(message.reads));
      child.send("reads");
    });
  return { ...handle(child, url), reads };
}

/** The baseline: a bare node:http server answering the given bytes to every request. */
export async function startBareServer(body) {
  const script = `
    const http = require("node:http");
    const body = require("node:fs").readFileSync(process.env.BODY_FILE);
    const server = http.createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length });
      res.end(body);
    });
    server.listen(0, "127.0.0.1", () => console.log("listening " + server.address().port));
    process.on("SIGTERM", () => server.close(() => process.exit(0)));
  `;
  // Through a file, not the environment: one variable holds at most 128 KiB, and a big prompt's answer is more.
  const file = join(mkdtempSync(join(tmpdir(), "promptstore-bare-")), "body");
  writeFileSync(file, body);
  const child = spawn(process.execPath, ["-e", script], {
    env: { ...process.env, BODY_FILE: file },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const port = await waitForLine(
    child,
    (line) => (line.startsWith("listening ") ? line.split(" ")[1] : null),
    "bare server",
  );
  return handle(child, `http://127.0.0.1:${port}`);
}

/** Resets the peak resident set size the kernel tracks, so the next reading covers one phase only. */
export function resetPeakRss(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** Peak resident set size since the last reset, in MB. */
export function peakRssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"));
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** CPU seconds (user and system) a process has used so far, from /proc (clock ticks of 100 a second). */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // After the command: state is field 3 of stat, utime and stime are 14 and 15.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
