/**
 * Every server process a suite starts leaves its whole output here, so that a check run after the suite
 * can look for crashes in all of them: an uncaught exception or unhandled rejection is a bug to find,
 * never to swallow (README, operations).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Per package: each package's suite runs with its own folder as the working directory. */
export const SERVER_LOGS = join(process.cwd(), ".tmp", "server-logs");

/** What a crash leaves: our JSON line (serve logs the origin) or Node's own report of one. */
export const CRASH = /uncaughtException|unhandledRejection|Unhandled 'error' event|UnhandledPromiseRejection/;

export function keepServerLog(what: string, output: string): void {
  mkdirSync(SERVER_LOGS, { recursive: true });
  const name = `${Date.now()}-${randomBytes(4).toString("hex")}.log`;
  writeFileSync(join(SERVER_LOGS, name), `${what}\n${output}`);
}

/** Called before a suite runs: the logs of an earlier run are not this one's. */
export function clearServerLogs(): void {
  rmSync(SERVER_LOGS, { recursive: true, force: true });
}

/** How many logs there are, and each line that shows a crash, with its file. */
export function crashesInServerLogs(): { logs: number; crashes: string[] } {
  let files: string[];
  try {
    files = readdirSync(SERVER_LOGS);
  } catch {
    return { logs: 0, crashes: [] };
  }
  const crashes: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(SERVER_LOGS, file), "utf8").split("\n");
    for (const line of lines) if (CRASH.test(line)) crashes.push(`${file} (${lines[0]}): ${line.slice(0, 500)}`);
  }
  return { logs: files.length, crashes };
}
