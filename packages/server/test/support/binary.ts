import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect } from "vitest";
import type { TestDatabase } from "./databases.js";
import { keepServerLog } from "./server-logs.js";

export const BIN = fileURLToPath(new URL("../../bin/promptstore.js", import.meta.url));
const run = promisify(execFile);

/**
 * PostgreSQL has no file beside it to keep a generated key in, so the server needs PROMPTSTORE_SECRET_KEY
 * there; the tests give every PostgreSQL server this one. SQLite servers make their own key file.
 */
export const TEST_SECRET_KEY = "5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee5ec7";
export function secretKeyEnv(databaseUrl: string | undefined): Record<string, string> {
  return databaseUrl?.startsWith("postgres") ? { PROMPTSTORE_SECRET_KEY: TEST_SECRET_KEY } : {};
}

/**
 * Passwords hashed at the test cost (PROMPTSTORE_PASSWORD_HASH_COST), by every server, command and in-process app a test
 * starts unless it says otherwise: at the standard cost, hashing was most of the account tests' time. The
 * standard cost is tested where the hash is (test/dashboard/session.test.ts).
 */
export const TEST_PASSWORD_COST = { PROMPTSTORE_PASSWORD_HASH_COST: "test" } as const;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one `promptstore` command with DATABASE_URL set, as a user's shell would. */
export async function cli(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, ...secretKeyEnv(databaseUrl), ...TEST_PASSWORD_COST, ...env },
    });
    if (stderr) keepServerLog(`promptstore ${args.join(" ")}`, stderr);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    keepServerLog(`promptstore ${args.join(" ")}, failed`, `${e.stdout ?? ""}${e.stderr ?? ""}`);
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** Runs a command with `--json`, expects it to succeed silently on stderr, and returns its parsed output. */
export async function cliJson(databaseUrl: string, args: string[]): Promise<any> {
  const res = await cli(databaseUrl, [...args, "--json"]);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout);
}

export interface RunningServer {
  url: string;
  process: ChildProcess;
  /** JSON lines the server printed with --json (bootstrap, listening). */
  events: Record<string, any>[];
  /** Its log lines so far (LOG_LEVEL=warn unless told). */
  logs: Record<string, any>[];
  /** Everything it wrote so far, stdout then stderr. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `promptstore serve --port 0 --json` and resolves once it listens. */
export function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--json"], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "warn",
      ...secretKeyEnv(databaseUrl),
      ...TEST_PASSWORD_COST,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events: Record<string, any>[] = [];
  const logs: Record<string, any>[] = [];
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  // "close", not "exit": by then everything it wrote has been read (pino writes asynchronously).
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code) => {
      keepServerLog(`serve on ${databaseUrl}, exit ${code}`, stdout + stderr);
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 20_000);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        if (line.startsWith('{"level"')) logs.push(JSON.parse(line));
        if (!line.startsWith('{"event"')) continue;
        const event = JSON.parse(line);
        events.push(event);
        if (event.event === "listening") {
          clearTimeout(timer);
          resolve({
            url: event.url,
            process: child,
            events,
            logs,
            output: () => stdout + stderr,
            async stop(signal = "SIGTERM") {
              if (child.exitCode === null) child.kill(signal);
              return exited;
            },
          });
        }
      }
    });
  });
}

export interface BinaryDatabase {
  /** The DATABASE_URL of this test's fresh database. */
  readonly url: string;
  /** The server under test, if started; killed after the test. */
  server: RunningServer | undefined;
}

/** A fresh database per test for suites that run the real binary; the server is killed and the database dropped after. */
export function useBinaryDatabase(database: TestDatabase): BinaryDatabase {
  let drop = async () => {};
  const context = { url: "", server: undefined as RunningServer | undefined };
  beforeEach(async () => {
    const created = await database.create();
    context.url = created.url;
    drop = created.drop;
  });
  afterEach(async () => {
    await context.server?.stop("SIGKILL");
    context.server = undefined;
    await drop();
  });
  return context;
}
