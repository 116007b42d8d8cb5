/**
 * README (operations, "When the database goes away"): on SQLite a full disk or a read-only database file is
 * a clear error, a write it stops changes nothing, and the database is intact afterwards
 * (PRAGMA integrity_check). The disk is a real tmpfs of 4 MB, filled for real; the read-only file is a
 * real file mode, honoured because the server runs as an ordinary user (root ignores file modes).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import SQLite from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, cliJson, type RunningServer, startServer } from "../support/binary.js";
import { keepServerLog } from "../support/server-logs.js";

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

function integrity(path: string): unknown {
  const db = new SQLite(path, { readonly: true });
  try {
    return db.pragma("integrity_check");
  } finally {
    db.close();
  }
}

/** Random text a section can hold: about `kb` kilobytes that no page can share with another. */
const bulk = (kb: number) => randomBytes(kb * 384).toString("base64");

describe.skipIf(!asRoot)("faults: SQLite's disk is full (sqlite)", () => {
  let dir: string;
  let mount: string;
  let server: RunningServer | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "promptstore-full-"));
    mount = join(dir, "disk");
    mkdirSync(mount);
    await run("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount]);
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    await run("umount", [mount]).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it("a write that meets a full disk is 503 naming it and changes nothing; space freed, writes work again", async () => {
    const database = join(mount, "store.sqlite");
    // Room the test gives back later.
    writeFileSync(join(mount, "filler"), Buffer.alloc(1024 * 1024));
    server = await startServer(database);
    const key = server.events.find((e) => e.event === "bootstrap")?.key.key;
    await cliJson(database, ["org", "set-plan", "default", "unlimited"]);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server?.url}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any };
    };
    expect((await call("POST", "/api/v2/prompts", { id: "small", name: "Small", markdown: "# A\nkept" })).status).toBe(
      201,
    );
    expect((await call("POST", "/api/v2/prompts", { id: "big", name: "Big", markdown: "# A\nstart" })).status).toBe(
      201,
    );

    let saved = 0;
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const sections = Array.from({ length: 9 }, (_, n) => ({ title: `S${n}`, content: bulk(90) }));
      const res = await call("PUT", "/api/v2/prompts/big", { sections });
      if (res.status === 200) saved++;
      else refused = res;
    }
    expect(saved).toBeGreaterThan(0);
    expect(refused).toEqual({
      status: 503,
      retryAfter: "2",
      body: { success: false, error: "database: the disk is full; nothing was changed" },
    });
    // Nothing of the refused write is there; what was there is served.
    const history = await call("GET", "/api/v2/prompts/big/versions");
    expect(history.body.data.versions).toHaveLength(saved + 1);
    expect((await call("GET", "/api/v2/prompts/small?guard=false")).body.data.prompt).toBe("<A>\nkept\n</A>");
    // The process lives on; with room again, the same write succeeds.
    rmSync(join(mount, "filler"));
    const again = await call("PUT", "/api/v2/prompts/big", { markdown: "# A\nafter the disk was freed" });
    expect(again.status).toBe(200);
    expect((await call("GET", "/api/v2/prompts/big/versions")).body.data.versions).toHaveLength(saved + 2);
    expect(server.process.exitCode).toBe(null);
    expect(await server.stop()).toBe(0);
    server = undefined;
    expect(integrity(database)).toEqual([{ integrity_check: "ok" }]);
  });
});

describe.skipIf(!asRoot)("faults: SQLite's database file is read-only (sqlite)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "promptstore-ro-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("serve and every command exit 1 with one line saying so, and the database is intact", async () => {
    const database = join(dir, "store.sqlite");
    await cliJson(database, ["org", "create", "acme"]);
    const { stdout: uid } = await run("id", ["-u", "nobody"]);
    const { stdout: gid } = await run("id", ["-g", "nobody"]);
    for (const path of [dir, database]) chownSync(path, Number(uid), Number(gid));
    chmodSync(database, 0o444);
    chmodSync(dir, 0o555);
    const asNobody = async (args: string[]) => {
      try {
        const { stdout, stderr } = await run("runuser", ["-u", "nobody", "--", process.execPath, BIN, ...args], {
          env: { ...process.env, DATABASE_URL: database, LOG_LEVEL: "warn" },
        });
        keepServerLog(`promptstore ${args.join(" ")} as nobody`, stdout + stderr);
        return { code: 0, output: stdout + stderr };
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string };
        keepServerLog(`promptstore ${args.join(" ")} as nobody, failed`, e.stdout + e.stderr);
        return { code: e.code, output: e.stdout + e.stderr };
      }
    };
    const serve = await asNobody(["serve", "--port", "0"]);
    expect(serve).toEqual({ code: 1, output: "error: database unavailable: attempt to write a readonly database\n" });
    const create = await asNobody(["org", "create", "other"]);
    expect(create).toEqual({ code: 1, output: "error: database unavailable: attempt to write a readonly database\n" });
    chmodSync(dir, 0o755);
    chmodSync(database, 0o644);
    expect(integrity(database)).toEqual([{ integrity_check: "ok" }]);
    const orgs = new SQLite(database, { readonly: true });
    expect(orgs.prepare("select name from organizations order by name").all()).toEqual([{ name: "acme" }]);
    orgs.close();
  });
});
