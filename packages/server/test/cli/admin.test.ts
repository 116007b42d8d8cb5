import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { cli, cliJson, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("promptstore admin commands ($name)", (database) => {
  const db = useBinaryDatabase(database);
  const json = (...args: string[]) => cliJson(db.url, args);

  it("creates organizations, projects and keys; lists keys by prefix; revokes", async () => {
    const org = await json("org", "create", "acme");
    expect(org).toMatchObject({ name: "acme", plan: "free", id: expect.stringMatching(/^org_/) });
    expect(await json("org", "set-plan", "acme", "pro")).toMatchObject({ id: org.id, plan: "pro" });
    expect(await json("org", "set-plan", org.id, "unlimited")).toMatchObject({ plan: "unlimited" });

    const created = await json("project", "create", "acme", "Web app");
    expect(created.project).toMatchObject({ name: "Web app", org_id: org.id });
    expect(created.key.key).toMatch(/^ps_/);

    const second = await json("key", "create", created.project.id);
    const third = await json("key", "create", "Web app");
    const listed = await json("key", "list", created.project.id);
    expect(listed.map((k: { id: string }) => k.id)).toEqual([created.key.id, second.id, third.id]);
    expect(JSON.stringify(listed)).not.toContain(second.key);
    expect(listed[1].prefix).toBe(second.key.slice(0, listed[1].prefix.length));

    const revoked = await json("key", "revoke", second.id);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    expect((await json("key", "list", created.project.id))[1].revoked_at).toBe(revoked.revoked_at);
  });

  it("creates scoped keys (publish by default) and lists each key's scope and last use", async () => {
    await json("org", "create", "acme");
    const created = await json("project", "create", "acme", "Web");
    expect(created.key.scope).toBe("publish");
    const read = await json("key", "create", "Web", "--scope", "read");
    const write = await json("key", "create", "Web", "--scope", "write");
    expect([read.scope, write.scope]).toEqual(["read", "write"]);
    const listed = await json("key", "list", "Web");
    expect(listed.map((k: { scope: string; last_used_at: null }) => [k.scope, k.last_used_at])).toEqual([
      ["publish", null],
      ["read", null],
      ["write", null],
    ]);
    const human = await cli(db.url, ["key", "create", "Web", "--scope", "read"]);
    expect(human.stdout).toMatch(/^API key key_[0-9a-f]+, scope read \(shown once, store it now\): ps_\S+\n$/);
    const lines = (await cli(db.url, ["key", "list", "Web"])).stdout.trim().split("\n");
    expect(lines[1]).toBe(`${read.id}  ${read.prefix}…  read     created ${read.created_at}  last used never`);
    const bad = await cli(db.url, ["key", "create", "Web", "--scope", "admin"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe("error: scope: must be one of read, write, publish\n");
  });

  it("records its changes in the audit trail as cli, and shows the trail with audit <project>", async () => {
    await json("org", "create", "acme");
    const created = await json("project", "create", "acme", "Web");
    const read = await json("key", "create", "Web", "--scope", "read");
    await json("org", "set-plan", "acme", "pro");
    await json("key", "revoke", read.id);
    const page = await json("audit", "Web");
    expect(page.next_cursor).toBeNull();
    expect(page.entries.map((e: Record<string, unknown>) => [e.actor, e.action, e.target, e.before, e.after])).toEqual([
      ["cli", "key.revoked", read.id, "read", "revoked"],
      ["cli", "plan.changed", created.project.org_id, "free", "pro"],
      ["cli", "key.created", read.id, null, "read"],
      ["cli", "key.created", created.key.id, null, "publish"],
    ]);
    const first = await json("audit", created.project.id, "--limit", "3");
    expect(first.entries).toEqual(page.entries.slice(0, 3));
    const rest = await json("audit", "Web", "--limit", "3", "--cursor", first.next_cursor);
    expect(rest).toEqual({ entries: page.entries.slice(3), next_cursor: null });

    const human = await cli(db.url, ["audit", "Web", "--limit", "1"]);
    expect(human.stdout).toBe(
      `${page.entries[0].at}  key.revoked       ${read.id}  read -> revoked  by cli\nmore: --cursor ${
        (await json("audit", "Web", "--limit", "1")).next_cursor
      }\n`,
    );
    const bad = await cli(db.url, ["audit", "Web", "--limit", "0"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe("error: limit: must be a whole number from 1 to 100\n");
  });

  it("prints human-readable output without --json, the key once", async () => {
    await cli(db.url, ["org", "create", "acme"]);
    const res = await cli(db.url, ["project", "create", "acme", "Web"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      /created project Web \(proj_[0-9a-f]+\)\nAPI key \(shown once, store it now\): ps_\S+\n/,
    );
  });

  it("fails with a clear message and exit code 1, as JSON with --json", async () => {
    const missing = await cli(db.url, ["project", "create", "nope", "Web", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: "organization nope not found" });
    const badPlan = await cli(db.url, ["org", "create", "x", "--plan", "gold"]);
    expect(badPlan.code).toBe(1);
    expect(badPlan.stderr).toBe("error: plan: must be one of free, pro, unlimited\n");
    await cli(db.url, ["org", "create", "dup"]);
    expect((await cli(db.url, ["org", "create", "dup"])).stderr).toMatch(/already exists/);
    expect((await cli(db.url, ["key", "revoke", "key_nothing"])).code).toBe(1);
    expect((await cli(db.url, ["bogus"])).code).not.toBe(0);
  });
});

describe("npx from the repository root", () => {
  it("runs the workspace's promptstore binary", async () => {
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    const { stdout } = await promisify(execFile)("npx", ["--no", "promptstore", "--version"], { cwd: root });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
