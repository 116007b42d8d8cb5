import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentHash } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import { promptView, savedVersion, successEnvelope } from "../../src/http/openapi/response-schemas.js";
import { backupStore, restoreStore } from "../../src/store/backup.js";
import { openStore } from "../../src/store/index.js";
import { useTestApp } from "../support/app.js";
import { DATABASES, freshStore } from "../support/databases.js";

const sections = [{ title: "Role", content: "Help {{ company }}." }];
const model = {
  name: "gpt-4o",
  temperature: 0.2,
  top_p: 1,
  max_output_tokens: 800,
  stop: ["END"],
  response_format: {
    type: "json_schema",
    json_schema: { name: "answer", strict: true, schema: { type: "object", properties: { a: { type: "string" } } } },
  },
  extra: { seed: 7, reasoning: { effort: "low" } },
};
/** The settings as reads carry them: canonical (RFC 8785) key order, the bytes the hash covers. */
const MODEL_JSON =
  '{"extra":{"reasoning":{"effort":"low"},"seed":7},"max_output_tokens":800,"name":"gpt-4o",' +
  '"response_format":{"json_schema":{"name":"answer","schema":{"properties":{"a":{"type":"string"}},"type":"object"},"strict":true},"type":"json_schema"},' +
  '"stop":["END"],"temperature":0.2,"top_p":1}';
const withEnabled = sections.map((s) => ({ ...s, enabled: true }));

describe.each(DATABASES)("model settings on a version ($name)", (database) => {
  const t = useTestApp(database);

  const get = async (url: string) => (await t.app.server.inject({ url, headers: { "x-api-key": t.key } })).body;

  it("a create with settings hashes them, and every read returns them after tools, canonical", async () => {
    const created = await t.request("POST", "/api/v2/prompts", { body: { id: "m", name: "M", sections, model } });
    expect(created.status).toBe(201);
    const hash = contentHash({ sections: withEnabled, tools: [], model: model as never });
    expect(created.body.data.version).toBe(hash);
    expect(hash).not.toBe(contentHash({ sections: withEnabled, tools: [] }));
    const at = created.body.data.created_at;
    expect(await get("/api/v2/prompts/m?guard=false")).toBe(
      `{"success":true,"data":{"id":"m","name":"M","description":"","prompt":"<Role>\\nHelp {{ company }}.\\n</Role>",` +
        `"sections":[{"id":"sec_d155d31bfd9f","title":"Role","content":"Help {{ company }}.","enabled":true}],` +
        `"variables":["company"],"version":"${hash}","label":"latest","production_version":null,` +
        `"created_at":"${at}","updated_at":"${at}","model":${MODEL_JSON},"labels":{}}}`,
    );
    const read = await t.request("GET", "/api/v2/prompts/m");
    expect(successEnvelope(promptView).parse(read.body).data.model).toEqual(JSON.parse(MODEL_JSON));
    // v1's frozen shape carries no settings (decisions.md, "Model settings").
    const v1 = await t.request("GET", "/api/v1/prompts/m");
    expect(Object.keys(v1.body.data)).not.toContain("model");
    expect(v1.body.data.version).toBe(hash);
  });

  it("a version without settings reads exactly as before: no model key", async () => {
    await t.request("POST", "/api/v2/prompts", { body: { id: "plain", name: "Plain", sections } });
    const read = await t.request("GET", "/api/v2/prompts/plain");
    expect(Object.keys(read.body.data)).toEqual([
      "id",
      "name",
      "description",
      "prompt",
      "sections",
      "variables",
      "version",
      "label",
      "production_version",
      "created_at",
      "updated_at",
      "labels",
    ]);
    expect(read.body.data.version).toBe(contentHash({ sections: withEnabled, tools: [] }));
  });

  it("a save that changes only the settings makes a new version; the same settings again make none", async () => {
    const created = await t.request("POST", "/api/v2/prompts", { body: { id: "s", name: "S", sections } });
    const first = created.body.data.version;
    const put = (body: Record<string, unknown>) => t.request("PUT", "/api/v2/prompts/s", { body });

    const withModel = await put({ sections, model: { name: "gpt-4o", temperature: 0.5 } });
    expect(successEnvelope(savedVersion).parse(withModel.body).data).toEqual({
      id: "s",
      version: contentHash({ sections: withEnabled, tools: [], model: { name: "gpt-4o", temperature: 0.5 } }),
      created: true,
      published: false,
    });
    // The same settings in another key order (and via markdown) are the same version.
    const again = await put({ markdown: "# Role\nHelp {{ company }}.", model: { temperature: 0.5, name: "gpt-4o" } });
    expect(again.body.data).toMatchObject({ version: withModel.body.data.version, created: false });
    const changed = await put({ sections, model: { name: "gpt-4o", temperature: 0.6 } });
    expect(changed.body.data.created).toBe(true);
    // Leaving model out is "no settings": the first version again.
    const without = await put({ sections });
    expect(without.body.data).toMatchObject({ version: first, created: false });

    const pinned = await t.request("GET", `/api/v2/prompts/s?version=${withModel.body.data.version}`);
    expect(pinned.body.data.model).toEqual({ name: "gpt-4o", temperature: 0.5 });
    const history = await t.request("GET", "/api/v2/prompts/s/versions");
    expect(history.body.data.versions.map((v: { version: string }) => v.version)).toEqual(
      expect.arrayContaining([first, withModel.body.data.version, changed.body.data.version]),
    );
    expect(history.body.data.versions).toHaveLength(3);
  });

  it("refuses bad settings with a 400 naming the field, and stores nothing", async () => {
    await t.request("POST", "/api/v2/prompts", { body: { id: "bad", name: "Bad", sections } });
    const cases: [unknown, string][] = [
      [{ temperature: 1 }, "model.name: required: the model's name"],
      [{ name: "m", temperature: 3 }, "model.temperature: must be a number from 0 to 2"],
      [{ name: "m", top_p: -1 }, "model.top_p: must be a number from 0 to 1"],
      [{ name: "m", max_output_tokens: 2.5 }, "model.max_output_tokens: must be a whole number from 1 to 1000000"],
      [{ name: "m", stop: ["a", "b", "c", "d", "e"] }, "model.stop: must contain 1 to 4 stop sequences"],
      [
        { name: "m", response_format: { type: "yaml" } },
        "model.response_format.type: must be text, json_object or json_schema",
      ],
      [{ name: "m", seed: 3 }, "model.seed: is not a known setting; put provider-specific settings in model.extra"],
      [{ name: "m", extra: "x" }, "model.extra: must be an object, not a string"],
    ];
    for (const [bad, message] of cases) {
      const res = await t.request("PUT", "/api/v2/prompts/bad", { body: { sections, model: bad } });
      expect(res.status, message).toBe(400);
      expect(res.body).toEqual({ success: false, error: message });
    }
    const created = await t.request("POST", "/api/v2/prompts", {
      body: { name: "New", sections, model: { name: "m", top_p: 2 } },
    });
    expect(created.body).toEqual({ success: false, error: "model.top_p: must be a number from 0 to 1" });
    const history = await t.request("GET", "/api/v2/prompts/bad/versions");
    expect(history.body.data.versions).toHaveLength(1);
    expect(await t.store.db.selectFrom("versions").select("model").execute()).toEqual([{ model: null }]);
  });

  it("import keeps settings under the hash they give, and refuses a hash that leaves them out", async () => {
    const hash = contentHash({ sections: withEnabled, tools: [], model: model as never });
    const version = { version: hash, created_at: "2026-01-02T03:04:05.000Z", message: "m", sections, model };
    const imported = await t.request("POST", "/api/v2/import", {
      body: { id: "imp", name: "Imp", versions: [version], latest_version: hash },
    });
    expect(imported.status).toBe(200);
    expect(imported.body.data).toMatchObject({ created: true, versions_created: 1 });
    expect(await t.request("GET", "/api/v2/prompts/imp").then((r) => r.body.data.model)).toEqual(
      JSON.parse(MODEL_JSON),
    );
    const plain = contentHash({ sections: withEnabled, tools: [] });
    const mismatch = await t.request("POST", "/api/v2/import", {
      body: { id: "imp2", name: "Imp", versions: [{ ...version, version: plain }], latest_version: plain },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe(
      `versions[0].version: does not match the version's content, whose hash is ${hash}`,
    );
  });

  it("backup and restore carry the settings, on the same hash", async () => {
    const created = await t.request("POST", "/api/v2/prompts", { body: { id: "b", name: "B", sections, model } });
    const dir = mkdtempSync(join(tmpdir(), "promptstore-model-"));
    const target = await freshStore(database);
    try {
      const file = join(dir, "store.backup");
      await backupStore(t.store, file);
      // Restored as the CLI does, through a store of its own.
      const restoring = await openStore(target.url);
      await restoreStore(restoring, file);
      await restoring.close();
      const app = await buildApp({ store: target.store, config: defaultConfig() });
      const read = await app.server.inject({ url: "/api/v2/prompts/b", headers: { "x-api-key": t.key } });
      expect(read.json().data.version).toBe(created.body.data.version);
      expect(read.json().data.model).toEqual(JSON.parse(MODEL_JSON));
      await app.server.close();
    } finally {
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
