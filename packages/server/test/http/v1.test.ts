import { describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const V1_FIELDS = [
  "id",
  "prompt",
  "sections",
  "tools",
  "version",
  "created_at",
  "updated_at",
  "name",
  "description",
  "variables",
  "label",
  "production_version",
];

describe.each(DATABASES)("GET /api/v1/prompts/:id, frozen ($name)", (database) => {
  const t = useTestApp(database);

  it("equals the v2 default read field by field, with tools [] when none", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) });
    await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } });
    const v1 = await t.request("GET", "/api/v1/prompts/prompt-1");
    const v2 = (await t.request("GET", "/api/v2/prompts/prompt-1")).body.data;
    expect(v1.status).toBe(200);
    expect(v1.body.success).toBe(true);
    expect(Object.keys(v1.body.data)).toEqual(V1_FIELDS);
    for (const field of V1_FIELDS) {
      if (field === "tools") continue;
      expect(v1.body.data[field], field).toEqual(v2[field]);
    }
    expect(v2).not.toHaveProperty("tools");
    expect(v1.body.data.tools).toEqual([]);
    expect(v1.body.data.label).toBe("production");
  });

  it("returns tools when the version has them", async () => {
    const tools = [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" } } }];
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { tools, publish: true }) });
    expect((await t.request("GET", "/api/v1/prompts/prompt-1")).body.data.tools).toEqual(tools);
  });

  it("ignores version and guard: always production with the guard", async () => {
    const queries = ["", "?guard=false", "?version=V2", "?version=latest", "?version=garbage&guard=nope"];
    for (const [n, query] of queries.entries()) {
      // A prompt of its own per query, read first through v1: the read cache is cold, so the answer is what
      // the route makes of this query, not what an earlier one left in the cache.
      const id = `prompt-${n}`;
      const v1hash = (await t.request("POST", "/api/v2/prompts", { body: promptBody(n, { publish: true }) })).body.data
        .version;
      const v2hash = (
        await t.request("PUT", `/api/v2/prompts/${id}`, { body: { sections: promptBody(n + 10).sections } })
      ).body.data.version;
      const res = await t.request("GET", `/api/v1/prompts/${id}${query.replace("V2", v2hash)}`);
      expect(res.status, query).toBe(200);
      expect(res.body.data.version, query).toBe(v1hash);
      expect(res.body.data.prompt, query).toBe(
        (await t.request("GET", `/api/v2/prompts/${id}?guard=true`)).body.data.prompt,
      );
    }
  });

  it("serves latest for a never-published prompt, as v2 does", async () => {
    const created = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1) })).body.data;
    const res = (await t.request("GET", "/api/v1/prompts/prompt-1")).body.data;
    expect(res).toMatchObject({ version: created.version, label: "latest", production_version: null });
  });

  it("carries Deprecation: true, X-API-Version: 1 and Cache-Control: no-store, also on failures", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const responses = [
      await t.request("GET", "/api/v1/prompts/prompt-1"),
      await t.request("GET", "/api/v1/prompts/missing"),
      await t.request("GET", "/api/v1/prompts/prompt-1", { key: null }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 404, 401]);
    for (const res of responses) {
      expect(res.headers.deprecation).toBe("true");
      expect(res.headers["x-api-version"]).toBe("1");
      expect(res.headers["cache-control"]).toBe("no-store");
    }
    expect((await t.request("GET", "/api/v2/prompts")).headers.deprecation).toBeUndefined();
  });

  it("is the only v1 endpoint: other methods 405, other paths 404", async () => {
    expect((await t.request("PUT", "/api/v1/prompts/x", { body: {} })).status).toBe(405);
    expect((await t.request("GET", "/api/v1/prompts")).status).toBe(404);
  });

  it("is project-scoped: another project's key gets 404", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const other = await t.newProject();
    expect((await t.request("GET", "/api/v1/prompts/prompt-1", { key: other.key })).status).toBe(404);
  });

  describe("invalid-key throttle", () => {
    const from = (ip: string) => ({ remoteAddress: ip });

    it("refuses an address after 10 invalid keys in a minute, even with a valid key, until the minute ends", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const get = (key: string | null, ip = "10.1.1.1") =>
        t.app.server.inject({
          method: "GET",
          url: "/api/v1/prompts/prompt-1",
          headers: key ? { "x-api-key": key } : {},
          ...from(ip),
        });
      for (let n = 0; n < 9; n++) expect((await get(`ps_guess_${n}`)).statusCode).toBe(401);
      expect((await get(null)).statusCode).toBe(401); // a missing key counts too: that is 10
      const refused = await get("ps_guess_11");
      expect(refused.statusCode).toBe(429);
      const retryAfter = Number(refused.headers["retry-after"]);
      expect(retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(refused.json()).toEqual({ success: false, error: expect.stringMatching(/too many invalid API keys/) });
      expect((await get(t.key)).statusCode).toBe(429);
      // Another address is unaffected, and v2 is not throttled this way.
      expect((await get(t.key, "10.2.2.2")).statusCode).toBe(200);
      const v2 = await t.app.server.inject({
        method: "GET",
        url: "/api/v2/prompts",
        headers: { "x-api-key": t.key },
        ...from("10.1.1.1"),
      });
      expect(v2.statusCode).toBe(200);
    });
  });
});
