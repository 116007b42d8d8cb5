/**
 * docs/releases.md with prompts in git: the lockfile records each prompt's labels, `push --publish <label>`
 * moves a label (and respects protection), `check --label <label>` guards it from CI.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BIN } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";

const run = promisify(execFile);

describe.each(DATABASES)("labels in git ($name)", (database) => {
  let server: ListeningApp | undefined;
  let dir = "";
  afterEach(async () => {
    await server?.close();
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ps = (args: string[]) =>
    run(process.execPath, [BIN, ...args, "--json"], {
      env: { ...process.env, PROMPTSTORE_URL: server?.url, PROMPTSTORE_API_KEY: server?.key },
    }).then(
      ({ stdout }) => ({ code: 0, out: JSON.parse(stdout), err: "" }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        out: error.stdout,
        err: error.stderr,
      }),
    );

  it("pull records labels, push --publish staging moves staging, check --label staging guards it", async () => {
    server = await listeningApp(database);
    dir = mkdtempSync(join(tmpdir(), "promptstore-git-labels-"));
    const v1 = (
      await server.call("POST", "/api/v2/prompts", { id: "bot", name: "Bot", markdown: "# A\none", publish: true })
    ).body.data.version;
    await server.call("POST", "/api/v2/prompts/bot/publish", { version: v1, label: "staging" });
    expect((await ps(["pull", dir])).code).toBe(0);
    const lock = JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8"));
    expect(lock.prompts.bot.labels).toEqual({ staging: v1 });
    expect((await ps(["check", dir, "--label", "staging"])).out).toEqual({ ok: true, differences: [] });

    writeFileSync(join(dir, "bot.md"), "---\nid: bot\nname: Bot\n---\n\n# A\n\ntwo\n");
    const pushed = await ps(["push", dir, "--publish", "staging"]);
    expect(pushed.code).toBe(0);
    const v2 = pushed.out.prompts[0].version;
    expect(pushed.out.prompts[0]).toMatchObject({ id: "bot", result: "saved", published: true });
    const read = await server.call("GET", "/api/v2/prompts/bot?version=staging");
    expect(read.body.data.version).toBe(v2);
    // Production did not move.
    expect((await server.call("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v1);
    expect(JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8")).prompts.bot.labels).toEqual({ staging: v2 });
    expect((await ps(["check", dir, "--label", "staging"])).code).toBe(0);

    // Moved from elsewhere: the check fails, naming the label.
    await server.call("POST", "/api/v2/prompts/bot/publish", { version: v1, label: "staging" });
    const moved = await ps(["check", dir, "--label", "staging"]);
    expect(moved.code).toBe(1);
    expect(moved.err).toBe('{"error":"staging differs from promptstore.lock for 1 prompt(s)"}\n');
  });

  it("a lockfile of a project without labels is the one it always was", async () => {
    server = await listeningApp(database);
    dir = mkdtempSync(join(tmpdir(), "promptstore-git-labels-"));
    await server.call("POST", "/api/v2/prompts", { id: "bot", name: "Bot", markdown: "# A\none", publish: true });
    await ps(["pull", dir]);
    const lock = JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8"));
    expect(Object.keys(lock.prompts.bot)).toEqual(["file", "hash", "production", "latest", "name", "description"]);
  });
});
