import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentHash } from "@promptstore/core/prompts/hash";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { openStore } from "../../src/store/index.js";
import { cli } from "../support/binary.js";
import { DATABASES, freshStore } from "../support/databases.js";

const MARKDOWN = bigPromptMarkdown();
const SECTIONS = markdownToSections(MARKDOWN);
const HASH = contentHash({ sections: SECTIONS, tools: [] });
const EDIT = "Rewritten: keep answers short and cite the file.";
const EDITED_SECTIONS = markdownToSections(editedBigPrompt(MARKDOWN, EDIT));
const EDITED_HASH = contentHash({ sections: EDITED_SECTIONS, tools: [] });
const strip = (sections: { title: string; content: string; enabled: boolean }[]) =>
  sections.map(({ title, content, enabled }) => ({ title, content, enabled }));

/** The 250 KB prompt through the files people keep it in: git (pull, status, diff, push), export/import, backup/restore. */
describe.each(DATABASES)("a 250 KB prompt in files ($name)", (database) => {
  let app: App;
  let storeUrl: string;
  let closeStore: () => Promise<void>;
  let url: string;
  let key: string;
  let dir: string;
  const extra: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    const fresh = await freshStore(database);
    storeUrl = fresh.url;
    closeStore = fresh.close;
    app = await buildApp({ store: fresh.store, config: defaultConfig() });
    const org = await app.tenants.createOrganization("org", "unlimited");
    const project = await app.tenants.createProject(org.id, "Project");
    key = (await app.tenants.createApiKey(project.id)).key;
    url = await app.server.listen({ port: 0, host: "127.0.0.1" });
    dir = mkdtempSync(join(tmpdir(), "promptstore-big-"));
    const res = await fetch(`${url}/api/v2/prompts`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ id: "agent", name: "Agent", markdown: MARKDOWN, publish: true }),
    });
    expect(res.status).toBe(201);
  });
  afterEach(async () => {
    await app.server.close();
    await closeStore();
    for (const close of extra.splice(0)) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ps = (args: string[]) => cli("", args, { PROMPTSTORE_URL: url, PROMPTSTORE_API_KEY: key });
  const latest = async () => {
    const res = await fetch(`${url}/api/v2/prompts/agent?version=latest`, { headers: { "x-api-key": key } });
    return ((await res.json()) as { data: any }).data;
  };

  it("pull writes it, status and push see nothing to do, an edited paragraph is one diff hunk and one new version", async () => {
    expect((await ps(["pull", dir])).code).toBe(0);
    const file = join(dir, "agent.md");
    const written = readFileSync(file, "utf8");
    // The file's body is the prompt's Markdown: parsed again, the very same sections.
    expect(markdownToSections(written.slice(written.indexOf("\n---\n") + 5))).toEqual(SECTIONS);

    const status = JSON.parse((await ps(["status", dir, "--json"])).stdout);
    expect(status.prompts.map((p: { id: string; state: string }) => [p.id, p.state])).toEqual([["agent", "unchanged"]]);
    const unchanged = await ps(["push", dir]);
    expect(unchanged.stdout.endsWith("0 created, 0 saved, 1 unchanged, 0 published\n")).toBe(true);
    expect((await latest()).version).toBe(HASH);

    writeFileSync(file, editedBigPrompt(written, EDIT));
    const shown = await ps(["diff", dir]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split("\n");
    expect(lines[0]).toBe(`agent.md (agent): server latest ${HASH.slice(0, 12)} → file ${EDITED_HASH.slice(0, 12)}`);
    expect(lines[1]).toBe('  changed section 2 "Instructions"');
    expect(lines.filter((l) => l.startsWith("    @@"))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith("    +"))).toEqual([`    +${EDIT}`]);
    const after = new Set(EDITED_SECTIONS[1]!.content.split("\n"));
    const removed = SECTIONS[1]!.content.split("\n").filter((l) => !after.has(l));
    expect(removed.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("    -"))).toEqual(removed.map((l) => `    -${l}`));

    const pushed = await ps(["push", dir]);
    expect(pushed.stdout.endsWith("0 created, 1 saved, 0 unchanged, 0 published\n")).toBe(true);
    const read = await latest();
    expect(read.version).toBe(EDITED_HASH);
    expect(strip(read.sections)).toEqual(EDITED_SECTIONS);
    const again = await ps(["push", dir]);
    expect(again.stdout.endsWith("0 created, 0 saved, 1 unchanged, 0 published\n")).toBe(true);
  }, 180_000);

  it("export and import carry it with its hash; a second import makes nothing", async () => {
    const file = join(dir, "bundle.json");
    expect((await ps(["export", file])).code).toBe(0);
    const other = await app.tenants.createProject((await app.tenants.createOrganization("o2", "unlimited")).id, "P2");
    const otherKey = (await app.tenants.createApiKey(other.id)).key;
    const into = (args: string[]) => cli("", args, { PROMPTSTORE_URL: url, PROMPTSTORE_API_KEY: otherKey });
    const first = await into(["import", file, "--json"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).prompts[0]).toMatchObject({ id: "agent", created: true, versions_created: 1 });
    const second = await into(["import", file, "--json"]);
    expect(JSON.parse(second.stdout).prompts[0]).toMatchObject({ created: false, versions_created: 0 });
    const res = await fetch(`${url}/api/v2/prompts/agent?version=latest`, { headers: { "x-api-key": otherKey } });
    const read = ((await res.json()) as { data: any }).data;
    expect(read.version).toBe(HASH);
    expect(strip(read.sections)).toEqual(SECTIONS);
  }, 180_000);

  it("backup and restore keep it byte for byte", async () => {
    const file = join(dir, "store.backup");
    const backup = await cli(storeUrl, ["backup", file]);
    expect(backup.code).toBe(0);
    const target = await database.create();
    extra.push(target.drop);
    const restored = await cli(target.url, ["restore", file]);
    expect(restored.code).toBe(0);
    const store = await openStore(target.url);
    const restoredApp = await buildApp({ store, config: defaultConfig() });
    extra.unshift(async () => {
      await restoredApp.server.close();
      await store.close();
    });
    const res = await restoredApp.server.inject({
      method: "GET",
      url: `/api/v2/prompts/agent?version=${HASH}`,
      headers: { "x-api-key": key },
    });
    expect(res.statusCode).toBe(200);
    expect(strip(res.json().data.sections)).toEqual(SECTIONS);
  }, 180_000);
});
