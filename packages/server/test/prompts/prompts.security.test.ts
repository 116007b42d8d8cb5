import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/store/accounts/tenants.js";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("v2 prompts, security ($name)", (database) => {
  const t = useTestApp(database);

  describe("401", () => {
    const routes: [string, string, unknown?][] = [
      ["GET", "/api/v2/prompts"],
      ["GET", "/api/v2/prompts/x"],
      ["GET", "/api/v2/prompts/x/versions"],
      ["POST", "/api/v2/prompts", promptBody()],
      ["PUT", "/api/v2/prompts/x", { sections: promptBody().sections }],
      ["POST", "/api/v2/prompts/x/publish", {}],
    ];

    it.each(routes)("%s %s without a key says it is missing", async (method, url, body) => {
      const res = await t.request(method, url, { key: null, body });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(/^x-api-key: missing/) });
    });

    it("a key sent as Authorization: Bearer is refused with where the key goes", async () => {
      const res = await t.request("GET", "/api/v2/prompts", {
        key: null,
        headers: { authorization: `Bearer ${t.key}` },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        success: false,
        error: "x-api-key: missing API key; the key goes in the x-api-key header, not Authorization",
      });
      const none = await t.request("GET", "/api/v2/prompts", { key: null });
      expect(none.body.error).toBe("x-api-key: missing API key; send the project key in the x-api-key header");
    });

    it.each(routes)("%s %s with a wrong key says it is invalid", async (method, url, body) => {
      const res = await t.request(method, url, { key: "ps_wrong", body });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatch(/^x-api-key: invalid/);
    });

    it("an empty or oversized key is rejected without a lookup error", async () => {
      expect((await t.request("GET", "/api/v2/prompts", { key: "" })).status).toBe(401);
      expect((await t.request("GET", "/api/v2/prompts", { key: "k".repeat(10_000) })).status).toBe(401);
    });

    it("a revoked key is refused", async () => {
      expect((await t.request("GET", "/api/v2/prompts")).status).toBe(200);
      await t.app.tenants.revokeApiKey(t.project.keyId);
      expect((await t.request("GET", "/api/v2/prompts")).status).toBe(401);
    });

    it("authenticates before reading the body: no key and a bad body is still 401", async () => {
      const res = await t.request("POST", "/api/v2/prompts", {
        key: null,
        payload: "{not json",
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(401);
    });
  });

  it("stores keys only as SHA-256 hashes with a short visible prefix", async () => {
    const rows = await t.store.db
      .selectFrom("api_keys")
      .selectAll()
      .where("project_id", "=", t.project.projectId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).toBe(hashApiKey(t.key));
    expect(rows[0]!.key_hash).not.toContain(t.key);
    expect(t.key.startsWith(rows[0]!.prefix)).toBe(true);
    expect(rows[0]!.prefix.length).toBeLessThan(t.key.length / 2);
  });

  describe("project isolation", () => {
    it("another project's key gets 404 on read, versions, save and publish, and an empty list", async () => {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
        .version;
      // Same organization, other project: the organization does not widen the scope.
      const sibling = await t.newProject({ orgId: t.project.orgId });
      const stranger = await t.newProject();
      for (const other of [sibling, stranger]) {
        const as = { key: other.key };
        const notFound = await t.request("GET", "/api/v2/prompts/prompt-1", as);
        expect(notFound.status).toBe(404);
        // Indistinguishable from a prompt that never existed.
        expect(notFound.body).toEqual({ success: false, error: "prompt prompt-1 not found" });
        expect((await t.request("GET", "/api/v2/prompts/never-existed", as)).body).toEqual({
          success: false,
          error: "prompt never-existed not found",
        });
        expect((await t.request("GET", `/api/v2/prompts/prompt-1?version=${v1}`, as)).status).toBe(404);
        expect((await t.request("GET", "/api/v2/prompts/prompt-1/versions", as)).status).toBe(404);
        expect(
          (
            await t.request("PUT", "/api/v2/prompts/prompt-1", {
              ...as,
              body: { sections: [{ title: "H", content: "x" }], publish: true },
            })
          ).status,
        ).toBe(404);
        expect(
          (await t.request("POST", "/api/v2/prompts/prompt-1/publish", { ...as, body: { version: v1 } })).status,
        ).toBe(404);
        expect((await t.request("GET", "/api/v2/prompts", as)).body.data.prompts).toEqual([]);
      }
      // Nothing the other projects tried changed the prompt.
      const versions = (await t.request("GET", "/api/v2/prompts/prompt-1/versions")).body.data;
      expect(versions.versions).toHaveLength(1);
      expect(versions.production_version).toBe(v1);
    });

    it("the same id can exist in two projects without either seeing the other's", async () => {
      const other = await t.newProject();
      await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "shared" } });
      const res = await t.request("POST", "/api/v2/prompts", {
        body: { ...promptBody(2), id: "shared" },
        key: other.key,
      });
      expect(res.status).toBe(201);
      // Exact answers: a read that merged both projects' rows would still contain each one's text.
      const read = async (key: string) => {
        const { data } = (await t.request("GET", "/api/v2/prompts/shared?guard=false", { key })).body;
        return { prompt: data.prompt, sections: data.sections.map((s: any) => [s.title, s.content]) };
      };
      expect(await read(t.key)).toEqual({
        prompt:
          "<Role>\nYou are assistant number 1 for {{ company }}.\n</Role>\n\n<Output_Format>\nAnswer in {{ language }}.\n</Output_Format>",
        sections: [
          ["Role", "You are assistant number 1 for {{ company }}."],
          ["Output Format", "Answer in {{ language }}."],
        ],
      });
      expect(await read(other.key)).toEqual({
        prompt:
          "<Role>\nYou are assistant number 2 for {{ company }}.\n</Role>\n\n<Output_Format>\nAnswer in {{ language }}.\n</Output_Format>",
        sections: [
          ["Role", "You are assistant number 2 for {{ company }}."],
          ["Output Format", "Answer in {{ language }}."],
        ],
      });
    });

    it("the same id and the same content in two projects: each reads exactly its own, old documents too", async () => {
      const other = await t.newProject();
      const body = { id: "shared", name: "Same", markdown: "# Role\nSame {{ x }}." };
      const mine = await t.request("POST", "/api/v2/prompts", { body: { ...body, publish: true } });
      const theirs = await t.request("POST", "/api/v2/prompts", { body, key: other.key });
      // Same content, same hash: only the project tells the rows apart.
      expect(theirs.body.data.version).toBe(mine.body.data.version);
      const hash = mine.body.data.version;
      const expected = (production: string | null) => ({
        id: "shared",
        name: "Same",
        sections: [{ title: "Role", content: "Same {{ x }}.", enabled: true }],
        prompt: "<Role>\nSame {{ x }}.\n</Role>",
        variables: ["x"],
        version: hash,
        production_version: production,
      });
      const pick = (d: any) => ({
        id: d.id,
        name: d.name,
        sections: d.sections.map(({ title, content, enabled }: any) => ({ title, content, enabled })),
        prompt: d.prompt,
        variables: d.variables,
        version: d.version,
        production_version: d.production_version,
      });
      for (let round = 0; round < 2; round++) {
        for (const [key, production] of [
          [t.key, hash],
          [other.key, null],
        ] as const) {
          for (const url of [
            "/api/v2/prompts/shared?guard=false",
            `/api/v2/prompts/shared?guard=false&version=${hash}`,
          ]) {
            const res = await t.request("GET", url, { key });
            expect(pick(res.body.data), url).toEqual(expected(production));
          }
          const versions = (await t.request("GET", "/api/v2/prompts/shared/versions", { key })).body.data;
          expect(versions.versions.map((v: any) => v.version)).toEqual([hash]);
          expect(versions.production_version).toBe(production);
        }
        // Versions saved before documents existed are read from their rows: the same must hold then.
        await t.store.db
          .updateTable("versions")
          .set({ text_json: null, variables_json: null, sections_json: null, tools_json: null })
          .execute();
        t.app.bus.publish({ kind: "reset" });
      }
    });

    it("the plan limit counts per project", async () => {
      const sibling = await t.newProject({ orgId: t.project.orgId });
      for (let n = 0; n < 5; n++) await t.request("POST", "/api/v2/prompts", { body: promptBody(n) });
      expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(9), key: sibling.key })).status).toBe(201);
    });
  });
});
