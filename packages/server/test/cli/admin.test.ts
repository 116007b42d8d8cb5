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
