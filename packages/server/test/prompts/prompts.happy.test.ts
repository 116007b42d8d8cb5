import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { contentHash } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import {
  createdPrompt,
  promptList,
  promptView,
  publishedVersion,
  savedVersion,
  successEnvelope,
  versionList,
} from "../../src/http/openapi/response-schemas.js";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const hashOf = (sections: { title: string; content: string; enabled?: boolean }[], tools: unknown[] = []) =>
  contentHash({ sections: sections.map((s) => ({ ...s, enabled: s.enabled ?? true })), tools: tools as never });

describe.each(DATABASES)("v2 prompts, happy paths ($name)", (database) => {
  const t = useTestApp(database);

  describe("POST /api/v2/prompts", () => {
    it("creates a prompt whose first version is latest, unpublished by default (201)", async () => {
      const body = promptBody(1);
      const res = await t.request("POST", "/api/v2/prompts", { body });
      expect(res.status).toBe(201);
      const data = successEnvelope(createdPrompt).parse(res.body).data;
      expect(data).toMatchObject({
        id: "prompt-1",
        name: "Prompt 1",
        published: false,
        version: hashOf(body.sections),
      });

      const read = await t.request("GET", "/api/v2/prompts/prompt-1");
      expect(read.body.data).toMatchObject({ version: data.version, label: "latest", production_version: null });
    });

    it("with publish: true makes the first version production", async () => {
      const res = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) });
      expect(res.body.data.published).toBe(true);
      const read = await t.request("GET", "/api/v2/prompts/prompt-1");
      expect(read.body.data).toMatchObject({ label: "production", production_version: res.body.data.version });
    });

    it("derives the id from the name and numbers collisions; an explicit id is kept", async () => {
      const ids = [];
      for (let n = 0; n < 3; n++) {
        const res = await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(n), name: "Support Bot" } });
        ids.push(res.body.data.id);
      }
      expect(ids).toEqual(["support-bot", "support-bot-2", "support-bot-3"]);
      const explicit = await t.request("POST", "/api/v2/prompts", {
        body: { ...promptBody(9), id: "my_bot-1", name: "Whatever" },
      });
      expect(explicit.body.data.id).toBe("my_bot-1");
    });

    it("accepts markdown: every # heading starts a section", async () => {
      const res = await t.request("POST", "/api/v2/prompts", {
        body: { name: "MD", markdown: "# Role\nYou help {{ user }}.\n\n# Rules\n```\n# not a heading\n```\n" },
      });
      expect(res.status).toBe(201);
      const read = await t.request("GET", `/api/v2/prompts/${res.body.data.id}?guard=false`);
      expect(read.body.data.sections.map((s: { title: string }) => s.title)).toEqual(["Role", "Rules"]);
      expect(read.body.data.prompt).toBe(
        "<Role>\nYou help {{ user }}.\n</Role>\n\n<Rules>\n```\n# not a heading\n```\n</Rules>",
      );
      expect(read.body.data.variables).toEqual(["user"]);
    });

    it("trims the name and defaults the description to an empty string", async () => {
      const res = await t.request("POST", "/api/v2/prompts", {
        body: { name: "  Spaced  ", sections: [{ title: "A", content: "x" }] },
      });
      expect(res.body.data.name).toBe("Spaced");
      const read = await t.request("GET", "/api/v2/prompts/spaced");
      expect(read.body.data.description).toBe("");
    });
  });

  describe("GET /api/v2/prompts/:id", () => {
    it("returns every field of the spec; the guard is on by default and follows one blank line", async () => {
      const body = promptBody(1, {
        sections: [
          { title: "Role", content: "Hi {{ name }}" },
          { title: "Off", content: "{{ hidden }}", enabled: false },
        ],
      });
      const created = await t.request("POST", "/api/v2/prompts", { body });
      const res = await t.request("GET", "/api/v2/prompts/prompt-1");
      expect(res.status).toBe(200);
      const data = successEnvelope(promptView).parse(res.body).data;
      expect(data.prompt).toBe(`<Role>\nHi {{ name }}\n</Role>\n\n${DEFAULT_GUARD_TEXT}`);
      expect(data.sections).toHaveLength(2);
      expect(data.sections[1]).toMatchObject({ title: "Off", enabled: false });
      expect(data.variables).toEqual(["name"]);
      expect(data.version).toBe(created.body.data.version);
      expect(data).not.toHaveProperty("tools");
      expect(data.created_at).toBe(created.body.data.created_at);
      expect(data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it("guard=false returns exactly the written content, and the guarded text starts with it", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const bare = (await t.request("GET", "/api/v2/prompts/prompt-1?guard=false")).body.data.prompt;
      const guarded = (await t.request("GET", "/api/v2/prompts/prompt-1?guard=true")).body.data.prompt;
      expect(bare).toBe(
        "<Role>\nYou are assistant number 1 for {{ company }}.\n</Role>\n\n<Output_Format>\nAnswer in {{ language }}.\n</Output_Format>",
      );
      expect(guarded).toBe(`${bare}\n\n${DEFAULT_GUARD_TEXT}`);
    });

    it("returns tools when the version defines them, and they are part of the hash", async () => {
      const tools = [
        {
          type: "function",
          function: {
            name: "lookup_order",
            description: "Find an order",
            parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
          },
        },
      ];
      const body = promptBody(1, { tools });
      const created = await t.request("POST", "/api/v2/prompts", { body });
      expect(created.body.data.version).toBe(hashOf(body.sections, tools));
      const read = await t.request("GET", "/api/v2/prompts/prompt-1");
      expect(read.body.data.tools).toEqual(tools);
    });

    it("serves production, latest, or an explicit version with the matching label", async () => {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
        .version;
      const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } }))
        .body.data.version;
      const get = async (q: string) => (await t.request("GET", `/api/v2/prompts/prompt-1${q}`)).body.data;
      expect(await get("")).toMatchObject({ version: v1, label: "production", production_version: v1 });
      expect(await get("?version=production")).toMatchObject({ version: v1, label: "production" });
      expect(await get("?version=latest")).toMatchObject({ version: v2, label: "latest", production_version: v1 });
      expect(await get(`?version=${v2}`)).toMatchObject({ version: v2, label: "version" });
      expect(await get(`?version=${v1.slice(0, 7)}`)).toMatchObject({ version: v1, label: "version" });
      expect(await get("?version=latest&unknown=1")).toMatchObject({ version: v2 });
    });
  });

  describe("PUT /api/v2/prompts/:id (state table)", () => {
    it("different content: a new version becomes latest, production stays (created: true)", async () => {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
        .version;
      const sections = [{ title: "Only", content: "new" }];
      const res = await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections, message: "shorter" } });
      expect(res.status).toBe(200);
      const data = successEnvelope(savedVersion).parse(res.body).data;
      expect(data).toEqual({ id: "prompt-1", version: hashOf(sections), created: true, published: false });
      const latest = (await t.request("GET", "/api/v2/prompts/prompt-1?version=latest")).body.data;
      expect(latest.sections.map((s: { title: string }) => s.title)).toEqual(["Only"]);
      expect(latest.production_version).toBe(v1);
    });

    it("identical content: no new version, latest does not move (created: false)", async () => {
      const first = promptBody(1);
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: first })).body.data.version;
      const v2 = (
        await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: [{ title: "X", content: "y" }] } })
      ).body.data.version;
      const again = await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: first.sections } });
      expect(again.body.data).toEqual({ id: "prompt-1", version: v1, created: false, published: false });
      const versions = (await t.request("GET", "/api/v2/prompts/prompt-1/versions")).body.data;
      expect(versions.versions).toHaveLength(2);
      expect(versions.latest_version).toBe(v2);
    });

    it("identical content with publish: true moves production to the existing version", async () => {
      const first = promptBody(1);
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: first })).body.data.version;
      await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: [{ title: "X", content: "y" }] } });
      const res = await t.request("PUT", "/api/v2/prompts/prompt-1", {
        body: { sections: first.sections, publish: true },
      });
      expect(res.body.data).toEqual({ id: "prompt-1", version: v1, created: false, published: true });
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data).toMatchObject({
        version: v1,
        label: "production",
      });
    });

    it("publish: true on a new version moves production to it", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) });
      const res = await t.request("PUT", "/api/v2/prompts/prompt-1", {
        body: { sections: promptBody(2).sections, publish: true },
      });
      expect(res.body.data).toMatchObject({ created: true, published: true });
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(res.body.data.version);
    });

    it("sections omitted from the body are removed; tools omitted are dropped", async () => {
      const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { tools }) });
      await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: [promptBody(1).sections[0]] } });
      const latest = (await t.request("GET", "/api/v2/prompts/prompt-1?version=latest")).body.data;
      expect(latest.sections).toHaveLength(1);
      expect(latest).not.toHaveProperty("tools");
    });

    it("accepts markdown, and name/description change the prompt without a version when content is the same", async () => {
      const created = await t.request("POST", "/api/v2/prompts", {
        body: { name: "N", markdown: "# A\nx" },
      });
      const before = (await t.request("GET", "/api/v2/prompts/n")).body.data;
      await new Promise((r) => setTimeout(r, 5));
      const res = await t.request("PUT", "/api/v2/prompts/n", {
        body: { markdown: "# A\nx", name: "Renamed", description: "now described" },
      });
      expect(res.body.data).toMatchObject({ created: false, version: created.body.data.version });
      const after = (await t.request("GET", "/api/v2/prompts/n")).body.data;
      expect(after).toMatchObject({ name: "Renamed", description: "now described", id: "n" });
      expect(after.updated_at > before.updated_at).toBe(true);
      expect(after.created_at).toBe(before.created_at);
    });

    it("a publish moves updated_at to the publish's time, in every read and the list", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const created = (await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.updated_at;
      await new Promise((r) => setTimeout(r, 5));
      const start = new Date().toISOString();
      expect((await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: {} })).status).toBe(200);
      const end = new Date().toISOString();
      const read = (await t.request("GET", "/api/v2/prompts/prompt-1")).body.data;
      expect(read.updated_at > created).toBe(true);
      expect(read.updated_at >= start && read.updated_at <= end, `${start} ≤ ${read.updated_at} ≤ ${end}`).toBe(true);
      expect(read.created_at).toBe(created);
      const listed = (await t.request("GET", "/api/v2/prompts")).body.data.prompts[0];
      expect(listed.updated_at).toBe(read.updated_at);
    });

    it("a new version moves updated_at", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const before = (await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.updated_at;
      await new Promise((r) => setTimeout(r, 5));
      await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } });
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.updated_at > before).toBe(true);
    });
  });

  describe("POST /api/v2/prompts/:id/publish", () => {
    it("publishes latest by default, with no body at all", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const res = await t.request("POST", "/api/v2/prompts/prompt-1/publish");
      expect(res.status).toBe(200);
      const data = successEnvelope(publishedVersion).parse(res.body).data;
      const latest = (await t.request("GET", "/api/v2/prompts/prompt-1?version=latest")).body.data.version;
      expect(data).toEqual({ id: "prompt-1", version: latest, published: true, label: "production" });
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.label).toBe("production");
    });

    it("rolls back by publishing an older hash prefix; the next read serves it", async () => {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
        .version;
      const v2 = (
        await t.request("PUT", "/api/v2/prompts/prompt-1", {
          body: { sections: promptBody(2).sections, publish: true },
        })
      ).body.data.version;
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v2);
      const rollback = await t.request("POST", "/api/v2/prompts/prompt-1/publish", {
        body: { version: v1.slice(0, 9) },
      });
      expect(rollback.body.data).toEqual({ id: "prompt-1", version: v1, published: true, label: "production" });
      const read = (await t.request("GET", "/api/v2/prompts/prompt-1")).body.data;
      expect(read).toMatchObject({ version: v1, production_version: v1, label: "production" });
      const latest = (await t.request("GET", "/api/v2/prompts/prompt-1?version=latest")).body.data;
      expect(latest.version).toBe(v2);
    });

    it("accepts a full hash and an explicit latest", async () => {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1) })).body.data.version;
      expect(
        (await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: v1 } })).body.data.version,
      ).toBe(v1);
      expect(
        (await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: "latest" } })).status,
      ).toBe(200);
    });
  });

  describe("GET /api/v2/prompts", () => {
    it("lists the project's prompts oldest first with the list fields", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) });
      await t.request("POST", "/api/v2/prompts", { body: promptBody(2) });
      const res = await t.request("GET", "/api/v2/prompts");
      expect(res.status).toBe(200);
      const data = successEnvelope(promptList).parse(res.body).data;
      expect(data.project).toEqual({ id: t.project.projectId, name: expect.any(String) });
      expect(data.prompts.map((p) => p.id)).toEqual(["prompt-1", "prompt-2"]);
      expect(data.prompts[0]!.production_version).toBe(data.prompts[0]!.latest_version);
      expect(data.prompts[1]!.production_version).toBeNull();
      expect(data).not.toHaveProperty("next_cursor");
    });

    it("pages with limit and cursor, next_cursor null at the end", async () => {
      const unlimited = await t.newProject({ plan: "unlimited" });
      for (let n = 0; n < 7; n++) {
        await t.request("POST", "/api/v2/prompts", { body: promptBody(n), key: unlimited.key });
      }
      const seen: string[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const url = `/api/v2/prompts?limit=3${cursor ? `&cursor=${cursor}` : ""}`;
        const data = (await t.request("GET", url, { key: unlimited.key })).body.data;
        seen.push(...data.prompts.map((p: { id: string }) => p.id));
        cursor = data.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((n) => `prompt-${n}`));
    });

    it("is empty for a new project", async () => {
      const res = await t.request("GET", "/api/v2/prompts");
      expect(res.body.data.prompts).toEqual([]);
    });
  });

  describe("GET /api/v2/prompts/:id/versions", () => {
    it("lists versions newest first with their messages and both pointers", async () => {
      const v1 = (
        await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { message: "first", publish: true }) })
      ).body.data.version;
      await new Promise((r) => setTimeout(r, 5));
      const v2 = (
        await t.request("PUT", "/api/v2/prompts/prompt-1", {
          body: { sections: promptBody(2).sections, message: "second" },
        })
      ).body.data.version;
      const res = await t.request("GET", "/api/v2/prompts/prompt-1/versions");
      const data = successEnvelope(versionList).parse(res.body).data;
      expect(data.versions.map((v) => [v.version, v.message])).toEqual([
        [v2, "second"],
        [v1, "first"],
      ]);
      expect(data).toMatchObject({ production_version: v1, latest_version: v2 });
    });
  });

  describe("version prefixes", () => {
    it("resolves 7+ characters, rejects shorter ones, 404s unknown and 409s ambiguous prefixes", async () => {
      // Two contents whose hashes share 7 leading characters, found by brute force (about 2^14 tries).
      const byPrefix = new Map<string, number>();
      let pair: [number, number] | undefined;
      for (let n = 0; !pair; n++) {
        const prefix = hashOf([{ title: "T", content: `c${n}` }]).slice(0, 7);
        const other = byPrefix.get(prefix);
        if (other !== undefined) pair = [other, n];
        else byPrefix.set(prefix, n);
      }
      const [a, b] = pair;
      const unlimited = await t.newProject({ plan: "unlimited" });
      const opts = (body: unknown) => ({ body, key: unlimited.key });
      await t.request("POST", "/api/v2/prompts", opts({ name: "p", sections: [{ title: "T", content: `c${a}` }] }));
      const vb = (await t.request("PUT", "/api/v2/prompts/p", opts({ sections: [{ title: "T", content: `c${b}` }] })))
        .body.data.version as string;
      const get = (v: string) => t.request("GET", `/api/v2/prompts/p?version=${v}`, { key: unlimited.key });

      const ambiguous = await get(vb.slice(0, 7));
      expect(ambiguous.status).toBe(409);
      expect(ambiguous.body.error).toMatch(/^version: /);
      expect((await get(vb.slice(0, 12))).body.data.version).toBe(vb);
      expect((await get(vb.slice(0, 6))).status).toBe(400);
      const unknown = await get(vb.startsWith("0000000") ? "1111111" : "0000000");
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatch(/^version: /);
      const publishAmbiguous = await t.request("POST", "/api/v2/prompts/p/publish", opts({ version: vb.slice(0, 7) }));
      expect(publishAmbiguous.status).toBe(409);
    });
  });
});
