import { describe, expect, it } from "vitest";
import { noneMatch } from "../../src/http/reads/etag.js";
import { promptBody, testApp, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("ETag on reads of a pinned full hash ($name)", (database) => {
  const t = useTestApp(database);

  const create = async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
      .version as string;
    const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } })).body
      .data.version as string;
    return { v1, v2 };
  };

  it("is the hash and the guard variant, g1 with the guard and g0 without", async () => {
    const { v1, v2 } = await create();
    const full = await t.request("GET", `/api/v2/prompts/prompt-1?version=${v1}`);
    expect(full.status).toBe(200);
    expect(full.headers.etag).toBe(`"${v1}.g1"`);
    expect((await t.request("GET", `/api/v2/prompts/prompt-1?version=${v2}&guard=true`)).headers.etag).toBe(
      `"${v2}.g1"`,
    );
    expect((await t.request("GET", `/api/v2/prompts/prompt-1?version=${v2}&guard=false`)).headers.etag).toBe(
      `"${v2}.g0"`,
    );
  });

  it("is absent where the answer can move: production, latest, prefixes, v1", async () => {
    const { v1 } = await create();
    for (const url of [
      "/api/v2/prompts/prompt-1",
      "/api/v2/prompts/prompt-1?version=production",
      "/api/v2/prompts/prompt-1?version=latest&guard=false",
      `/api/v2/prompts/prompt-1?version=${v1.slice(0, 63)}`,
      `/api/v2/prompts/prompt-1?version=${v1.slice(0, 7)}`,
      "/api/v1/prompts/prompt-1",
    ]) {
      const res = await t.request("GET", url, { headers: { "if-none-match": `"${v1}.g1"` } });
      expect(res.status, url).toBe(200);
      expect(res.headers, url).not.toHaveProperty("etag");
    }
  });

  it("If-None-Match with the tag answers 304 with no body and the usual headers", async () => {
    const { v1 } = await create();
    const url = `/api/v2/prompts/prompt-1?version=${v1}`;
    // Twice: the first is a miss (read from the database), the second a cache hit.
    for (let i = 0; i < 2; i++) {
      const res = await t.request("GET", url, { headers: { "if-none-match": `"${v1}.g1"`, "x-request-id": "r-304" } });
      expect(res.status).toBe(304);
      expect(res.body).toBe("");
      expect(res.headers.etag).toBe(`"${v1}.g1"`);
      expect(res.headers["x-request-id"]).toBe("r-304");
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["x-api-version"]).toBe("2");
      expect(res.headers["x-ratelimit-limit"]).toBe("60");
      expect(res.headers).not.toHaveProperty("content-type");
      expect(res.headers).not.toHaveProperty("content-length");
    }
  });

  it("a tag that does not match, or names the other guard variant, gets the full answer", async () => {
    const { v1, v2 } = await create();
    for (const tag of [`"${v2}.g1"`, `"${v1}.g0"`, `${v1}.g1`, `"${v1}"`]) {
      const res = await t.request("GET", `/api/v2/prompts/prompt-1?version=${v1}`, {
        headers: { "if-none-match": tag },
      });
      expect(res.status, tag).toBe(200);
      expect(res.body.data.version).toBe(v1);
      expect(res.headers.etag).toBe(`"${v1}.g1"`);
    }
  });

  it("a version that does not exist is a 404 whatever the client holds", async () => {
    await create();
    const absent = "0".repeat(64);
    for (const url of [`/api/v2/prompts/prompt-1?version=${absent}`, `/api/v2/prompts/nope?version=${absent}`]) {
      const res = await t.request("GET", url, { headers: { "if-none-match": `"${absent}.g1"` } });
      expect(res.status, url).toBe(404);
      expect(res.headers, url).not.toHaveProperty("etag");
    }
  });

  it("works with the read cache off", async () => {
    const off = await testApp(database, { PROMPTSTORE_READ_CACHE: false });
    try {
      const v1 = (await off.request("POST", "/api/v2/prompts", { body: promptBody(1) })).body.data.version;
      const url = `/api/v2/prompts/prompt-1?version=${v1}&guard=false`;
      expect((await off.request("GET", url)).headers.etag).toBe(`"${v1}.g0"`);
      expect((await off.request("GET", url, { headers: { "if-none-match": `"${v1}.g0"` } })).status).toBe(304);
    } finally {
      await off.close();
    }
  });
});

describe("If-None-Match matching", () => {
  const tag = '"abc.g1"';
  it("matches the tag itself, its weak form, a list holding it, and *", () => {
    expect(noneMatch('"abc.g1"', tag)).toBe(true);
    expect(noneMatch('W/"abc.g1"', tag)).toBe(true);
    expect(noneMatch('"x", "abc.g1" ,"y"', tag)).toBe(true);
    expect(noneMatch(['"x"', '"abc.g1"'], tag)).toBe(true);
    expect(noneMatch("*", tag)).toBe(true);
  });

  it("matches nothing else", () => {
    expect(noneMatch(undefined, tag)).toBe(false);
    expect(noneMatch("", tag)).toBe(false);
    expect(noneMatch("abc.g1", tag)).toBe(false);
    expect(noneMatch('"abc.g0"', tag)).toBe(false);
    expect(noneMatch('"abc.g1x"', tag)).toBe(false);
    expect(noneMatch('w/"abc.g1"', tag)).toBe(false);
  });
});
