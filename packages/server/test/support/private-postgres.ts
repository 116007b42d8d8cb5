/**
 * A PostgreSQL server of the test's own, made with the machine's initdb and pg_ctl in a temporary folder,
 * on a free port: a fault test restarts, stops and starts it without disturbing the machine's server, which
 * the rest of the suite uses. initdb refuses to run as root, so as root it runs as the `postgres` user.
 */
import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = "/usr/lib/postgresql";

/** The machine's PostgreSQL programs, newest version; undefined when there are none. */
export const POSTGRES_BIN: string | undefined = (() => {
  if (!existsSync(ROOT)) return undefined;
  const versions = readdirSync(ROOT)
    .filter((v) => existsSync(join(ROOT, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(ROOT, versions[0], "bin");
})();

export interface PrivatePostgres {
  /** A DATABASE_URL for the server's `postgres` database. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** pg_ctl restart -m fast: every connection ends, the server is back when it returns. */
  restart(): Promise<void>;
  /** The server's own log, for a failing test's message. */
  log(): string;
  /** Stops the server (if running) and deletes its folder. */
  remove(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program, as `postgres` when we are root. */
async function pg(program: string, args: string[]): Promise<void> {
  const path = join(POSTGRES_BIN as string, program);
  if (asRoot) await run("runuser", ["-u", "postgres", "--", path, ...args]);
  else await run(path, args);
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (!POSTGRES_BIN) throw new Error("no PostgreSQL programs under /usr/lib/postgresql");
  const dir = mkdtempSync(join(tmpdir(), "promptstore-pg-"));
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  const port = await freePort();
  await pg("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  // The socket in our folder, TCP on loopback only; fsync off: a test's data need not survive a power cut.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const ctl = (...args: string[]) => pg("pg_ctl", ["-D", data, "-l", logFile, "-o", options, "-w", ...args]);
  await ctl("start");
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      await ctl("-m", "fast", "stop");
      running = false;
    },
    async start() {
      await ctl("start");
      running = true;
    },
    async restart() {
      await ctl("-m", "fast", "restart");
      running = true;
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    async remove() {
      if (running) await ctl("-m", "immediate", "stop").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
