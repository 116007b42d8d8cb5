import { contentHash } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import { importedPrompt, successEnvelope } from "../../src/http/openapi/response-schemas.js";
import { KEY_PREFIX_LENGTH } from "../../src/store/accounts/tenants.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const sectionsOf = (n: number) => [
  { title: "Role", content: `Version ${n} of the role, for {{ company }}.` },
  { title: "Notes", content: `internal ${n}`, enabled: false },
];
const hashOf = (n: number) => contentHash({ sections: sectionsOf(n).map((s) => ({ enabled: true, ...s })), tools: [] });
const versionOf = (n: number) => ({
  version: hashOf(n),
  message: `change ${n}`,
  created_at: `2025-0${n}-01T10:00:00.000Z`,
  saved_by: `user:author${n}@example.com`,
  sections: sectionsOf(n),
});

describe.each(DATABASES)("POST /api/v2/import ($name)", (database) => {
  const t = useTestApp(database);

  const importBody = (extra: Record<string, unknown> = {}) => ({
    id: "support-bot",
    name: "Support Bot",
    description: "imported",
    created_at: "2025-01-01T09:00:00.000Z",
    versions: [versionOf(1), versionOf(2), versionOf(3)],
    latest_version: hashOf(3),
    ...extra,
  });

  it("creates the prompt with every version, keeping hashes, messages, times and authors; production stays unpublished", async () => {
    const res = await t.request("POST", "/api/v2/import", { body: importBody() });
    expect(res.status).toBe(200);
    expect(successEnvelope(importedPrompt).parse(res.body).data).toEqual({
      id: "support-bot",
      created: true,
      versions_created: 3,
      versions_existing: 0,
      latest_version: hashOf(3),
      production_version: null,
      published: false,
    });
    const history = await t.request("GET", "/api/v2/prompts/support-bot/versions");
    expect(history.body.data).toEqual({
      id: "support-bot",
      production_version: null,
      latest_version: hashOf(3),
      versions: [3, 2, 1].map((n) => ({
        version: hashOf(n),
        message: `change ${n}`,
        created_at: `2025-0${n}-01T10:00:00.000Z`,
        saved_by: `user:author${n}@example.com`,
        labels: {},
      })),
      labels: {},
    });
    const list = await t.request("GET", "/api/v2/prompts");
    expect(list.body.data.prompts[0].created_at).toBe("2025-01-01T09:00:00.000Z");
    const read = await t.request("GET", `/api/v2/prompts/support-bot?version=${hashOf(2)}&guard=false`);
    expect(read.body.data.prompt).toBe("<Role>\nVersion 2 of the role, for {{ company }}.\n</Role>");
    expect(read.body.data.sections.map((s: any) => s.enabled)).toEqual([true, false]);
  });

  it("is idempotent: the same import again makes nothing and records no event", async () => {
    await t.request("POST", "/api/v2/import", { body: importBody() });
    const before = await t.request("GET", "/api/v2/prompts");
    const again = await t.request("POST", "/api/v2/import", { body: importBody() });
    expect(again.body.data).toMatchObject({
      created: false,
      versions_created: 0,
      versions_existing: 3,
      published: false,
    });
    const after = await t.request("GET", "/api/v2/prompts");
    expect(after.body.data.prompts).toEqual(before.body.data.prompts);
    const events = await t.store.events.since(t.project.projectId, 0, 100);
    expect(events.map((e) => e.type)).toEqual(["prompt.created"]);
  });

  it("moves production only when production_version is given, and then records prompt.published", async () => {
    await t.request("POST", "/api/v2/import", { body: importBody() });
    const published = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [], production_version: hashOf(2) }),
    });
    expect(published.body.data).toMatchObject({
      production_version: hashOf(2),
      latest_version: hashOf(3),
      published: true,
    });
    const read = await t.request("GET", "/api/v2/prompts/support-bot");
    expect(read.body.data.version).toBe(hashOf(2));
    expect(read.body.data.label).toBe("production");
  });

  it("records who imported in the audit trail, and tells latest moving back to an older bundle's as a save", async () => {
    await t.request("POST", "/api/v2/import", { body: importBody() });
    await t.request("POST", "/api/v2/import", { body: importBody({ versions: [], production_version: hashOf(2) }) });
    // An older bundle: nothing to add, but latest moves back to what it names.
    const older = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [versionOf(1)], latest_version: hashOf(1) }),
    });
    expect(older.body.data).toMatchObject({ versions_created: 0, latest_version: hashOf(1), published: false });
    const trail = await t.request("GET", "/api/v2/audit");
    // The importer's key, never the bundle's authors (they stay the versions' saved_by).
    const importer = `key:${t.key.slice(0, KEY_PREFIX_LENGTH)}`;
    expect(trail.body.data.entries.map((e: any) => [e.actor, e.action, e.target, e.before, e.after])).toEqual([
      [importer, "prompt.saved", "support-bot", hashOf(3), hashOf(1)],
      [importer, "prompt.published", "support-bot", null, hashOf(2)],
      [importer, "prompt.created", "support-bot", null, hashOf(3)],
      // The test project's own key, made when the project was.
      ["system", "key.created", t.project.keyId, null, "publish"],
    ]);
    const events = await t.store.events.since(t.project.projectId, 0, 100);
    expect(events.map((e: any) => [e.type, e.latest_version, e.production_version])).toEqual([
      ["prompt.created", hashOf(3), null],
      ["prompt.published", hashOf(3), hashOf(2)],
      ["prompt.version_saved", hashOf(1), hashOf(2)],
    ]);
  });

  it("adds the missing versions to a prompt that has some, in any order", async () => {
    await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [versionOf(1)], latest_version: hashOf(1) }),
    });
    const res = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [versionOf(3), versionOf(1), versionOf(2)] }),
    });
    expect(res.body.data).toMatchObject({
      created: false,
      versions_created: 2,
      versions_existing: 1,
      latest_version: hashOf(3),
    });
    const history = await t.request("GET", "/api/v2/prompts/support-bot/versions");
    expect(history.body.data.versions.map((v: any) => v.version)).toEqual([hashOf(3), hashOf(2), hashOf(1)]);
  });

  it("refuses a version whose hash does not match its content, naming the field, and stores nothing", async () => {
    // Everything else about the import is valid, latest included: only the forged hash can refuse it.
    const forged = hashOf(7);
    const bad = { ...versionOf(2), version: forged };
    const res = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [versionOf(1), bad], latest_version: forged }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      `versions[1].version: does not match the version's content, whose hash is ${hashOf(2)}`,
    );
    expect((await t.request("GET", "/api/v2/prompts/support-bot")).status).toBe(404);
  });

  it("refuses pointers at versions the prompt does not hold, and a create without latest_version", async () => {
    const missing = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [versionOf(1)], latest_version: hashOf(3) }),
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe(
      "latest_version: must be one of the versions sent when the import creates the prompt",
    );
    const noLatest = await t.request("POST", "/api/v2/import", { body: importBody({ latest_version: undefined }) });
    expect(noLatest.body.error).toBe("latest_version: required when the import creates the prompt");
    await t.request("POST", "/api/v2/import", { body: importBody() });
    const production = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [], production_version: hashOf(9) }),
    });
    expect(production.status).toBe(400);
    expect(production.body.error).toBe(
      `production_version: prompt support-bot has no version ${hashOf(9)}; send it in versions`,
    );
    expect((await t.request("GET", "/api/v2/prompts/support-bot")).body.data.production_version).toBeNull();
  });

  it("validates the body like every write: unknown fields, bad times, more than 100 versions", async () => {
    const unknown = await t.request("POST", "/api/v2/import", { body: importBody({ publish: true }) });
    expect(unknown.body.error).toBe("publish: is not a known field");
    const time = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: [{ ...versionOf(1), created_at: "yesterday" }] }),
    });
    expect(time.status).toBe(400);
    expect(time.body.error).toBe("versions[0].created_at: must be an ISO 8601 UTC timestamp");
    const many = await t.request("POST", "/api/v2/import", {
      body: importBody({ versions: Array.from({ length: 101 }, () => versionOf(1)) }),
    });
    expect(many.body.error).toBe("versions: must contain at most 100 versions");
  });

  it("counts against the plan: a free project's sixth prompt is refused (403)", async () => {
    for (let n = 0; n < 5; n++) {
      expect((await t.request("POST", "/api/v2/import", { body: importBody({ id: `p${n}` }) })).status).toBe(200);
    }
    const sixth = await t.request("POST", "/api/v2/import", { body: importBody({ id: "p5" }) });
    expect(sixth.status).toBe(403);
    expect(sixth.body.error).toBe("plan limit reached: the free plan allows 5 prompts per project");
  });

  it("stays in the key's project", async () => {
    await t.request("POST", "/api/v2/import", { body: importBody() });
    const other = await t.newProject();
    expect((await t.request("GET", "/api/v2/prompts/support-bot", { key: other.key })).status).toBe(404);
  });
});
