/**
 * Includes in git (docs/includes.md, docs/git.md): a prompt file shows each include as written, the lockfile
 * records its pin; a push of an unchanged file makes no version, a push of an edited one keeps the lockfile's
 * pins and pins new includes at the save; `check --includes` fails when a pin is behind its pointer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";
import { pinnedHash } from "./includes-support.js";

const dirs: string[] = [];
const apps: ListeningApp[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const app of apps.splice(0)) await app.close();
});

const short = (hash: string) => hash.slice(0, 12);

describe.each(DATABASES)("prompts with includes in git ($name)", (database) => {
  it("pull writes the include as written and the pins in the lockfile; push keeps them; check --includes guards them", async () => {
    const app = await listeningApp(database);
    apps.push(app);
    const dir = join(mkdtempSync(join(tmpdir(), "promptstore-includes-")), "prompts");
    dirs.push(join(dir, ".."));
    const env = { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key };
    const ps = (...args: string[]) => cli("", args, env);
    const json = async (...args: string[]) => {
      const res = await ps(...args, "--json");
      return { ...res, out: res.stdout === "" ? undefined : JSON.parse(res.stdout) };
    };
    const create = async (id: string, sections: { title: string; content: string }[]) =>
      (await app.call("POST", "/api/v2/prompts", { id, name: id, sections, publish: true })).body.data.version;
    const versions = async (id: string) =>
      (await app.call("GET", `/api/v2/prompts/${id}/versions`)).body.data.versions.length;
    const lock = () => JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8")).prompts;

    const v1 = await create("safety", [{ title: "R", content: "Be kind." }]);
    const written = [
      { title: "S", content: "Rules: {{> safety}}" },
      { title: "T", content: "Tone." },
    ];
    const s1 = await create("support", written);
    expect(s1).toBe(pinnedHash(written, { safety: v1 }));

    expect((await ps("pull", dir)).code).toBe(0);
    expect(readFileSync(join(dir, "support.md"), "utf8")).toBe(
      "---\nid: support\nname: support\n---\n\n# S\n\nRules: {{> safety}}\n\n# T\n\nTone.\n",
    );
    expect(lock().support).toEqual({
      file: "support.md",
      hash: s1,
      production: s1,
      latest: s1,
      name: "support",
      description: "",
      includes: { safety: v1 },
    });
    // A prompt without includes keeps the entry it always had.
    expect(Object.keys(lock().safety)).toEqual(["file", "hash", "production", "latest", "name", "description"]);
    const status = await json("status", dir);
    expect(status.out.prompts.find((p: { id: string }) => p.id === "support")).toMatchObject({
      state: "unchanged",
      local: s1,
    });
    // Unchanged: no version, whatever the include's pointer names by now.
    const pushed = await json("push", dir);
    expect(pushed.out.prompts.map((p: { result: string }) => p.result)).toEqual(["unchanged", "unchanged"]);
    expect(await versions("support")).toBe(1);

    // The piece moves on; pulled again, the dependent's file and pin stay: its version did not change.
    const v2 = (
      await app.call("PUT", "/api/v2/prompts/safety", {
        sections: [{ title: "R", content: "Be kinder." }],
        publish: true,
      })
    ).body.data.version;
    expect((await ps("pull", dir)).code).toBe(0);
    expect(lock().support.includes).toEqual({ safety: v1 });
    // Without --includes, check does not look at pins.
    expect(await json("check", dir)).toMatchObject({ code: 0, out: { ok: true, differences: [] } });
    const behind = await json("check", dir, "--includes");
    expect(behind.code).toBe(1);
    expect(behind.out).toEqual({
      ok: false,
      differences: [],
      includes: [{ id: "support", include: "safety", pointer: "production", pinned: v1, current: v2 }],
    });
    expect(behind.stderr).toBe(
      '{"error":"1 include pin(s) of promptstore.lock behind their pointers, in support: promptstore update-includes <prompt>, then pull"}\n',
    );
    const told = await ps("check", dir, "--includes");
    expect(told.stdout).toBe(
      `production matches promptstore.lock\nsupport: include safety is pinned to ${short(v1)}, behind production, which names ${short(v2)} now\n`,
    );

    // An edit elsewhere keeps the pin; a new include is pinned by the save.
    writeFileSync(
      join(dir, "support.md"),
      "---\nid: support\nname: support\n---\n\n# S\n\nRules: {{> safety}}\n\n# T\n\nWarm tone.\n",
    );
    const edited = await json("push", dir);
    const s2 = pinnedHash([written[0] as { title: string; content: string }, { title: "T", content: "Warm tone." }], {
      safety: v1,
    });
    expect(edited.out.prompts.find((p: { id: string }) => p.id === "support")).toEqual({
      id: "support",
      file: "support.md",
      result: "saved",
      version: s2,
      published: false,
    });
    expect(lock().support).toMatchObject({ hash: s2, latest: s2, includes: { safety: v1 } });
    const t1 = await create("tone", [{ title: "V", content: "Warmly." }]);
    writeFileSync(
      join(dir, "support.md"),
      "---\nid: support\nname: support\n---\n\n# S\n\nRules: {{> safety}}\n\n# T\n\n{{> tone}}\n",
    );
    const added = await json("push", dir);
    const s3 = pinnedHash([written[0] as { title: string; content: string }, { title: "T", content: "{{> tone}}" }], {
      safety: v1,
      tone: t1,
    });
    expect(added.out.prompts.find((p: { id: string }) => p.id === "support")).toMatchObject({
      result: "saved",
      version: s3,
    });
    expect(lock().support).toMatchObject({ hash: s3, includes: { safety: v1, tone: t1 } });
    const read = (await app.call("GET", "/api/v2/prompts/support?version=latest&guard=false")).body.data;
    expect(read.prompt).toBe("<S>\nRules: Be kind.\n</S>\n\n<T>\nWarmly.\n</T>");
    // The lock and the files agree (tone is on the server only, until a pull): nothing to push.
    const after = await json("status", dir);
    expect(after.out.prompts.map((p: { id: string; state: string }) => [p.id, p.state])).toEqual([
      ["safety", "unchanged"],
      ["support", "unchanged"],
    ]);
    expect((await json("push", dir)).out.prompts.every((p: { result: string }) => p.result === "unchanged")).toBe(true);
    expect(await versions("support")).toBe(3);

    // Updated on purpose, then pulled: the lockfile's pins follow, and check --includes passes.
    expect((await ps("update-includes", "support", "--version", "latest", "--publish")).code).toBe(0);
    expect((await ps("pull", dir)).code).toBe(0);
    expect(lock().support.includes).toEqual({ safety: v2, tone: t1 });
    expect(readFileSync(join(dir, "support.md"), "utf8")).toContain("Rules: {{> safety}}");
    expect(await json("check", dir, "--includes")).toMatchObject({
      code: 0,
      out: { ok: true, differences: [], includes: [] },
    });
  });

  it("check --includes names a pin whose label is gone; an include of a hash is never behind", async () => {
    const app = await listeningApp(database);
    apps.push(app);
    const dir = join(mkdtempSync(join(tmpdir(), "promptstore-includes-")), "prompts");
    dirs.push(join(dir, ".."));
    const env = { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key };
    const v1 = (
      await app.call("POST", "/api/v2/prompts", {
        id: "safety",
        name: "Safety",
        sections: [{ title: "R", content: "one" }],
        publish: true,
      })
    ).body.data.version;
    await app.call("POST", "/api/v2/prompts/safety/publish", { version: v1, label: "staging" });
    await app.call("POST", "/api/v2/prompts", {
      id: "support",
      name: "Support",
      sections: [{ title: "S", content: `{{> safety@staging}} {{> safety@${v1.slice(0, 7)}}}` }],
      publish: true,
    });
    expect((await cli("", ["pull", dir], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8")).prompts.support.includes).toEqual({
      "safety@staging": v1,
      [`safety@${v1.slice(0, 7)}`]: v1,
    });
    await app.call("DELETE", "/api/v2/prompts/safety/labels/staging");
    const gone = await cli("", ["check", dir, "--includes", "--json"], env);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).includes).toEqual([
      { id: "support", include: "safety@staging", pointer: "staging", pinned: v1, current: null },
    ]);
  });
});
