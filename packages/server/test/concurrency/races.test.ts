import { beforeEach, describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const N = 10;

/**
 * Races decided by the database (unique keys, conditional updates, row locks), never by a read before a
 * write. On PostgreSQL the requests really run at once on a pool of connections; on SQLite the single
 * writer serializes them. No race may end in a 500.
 */
describe.each(DATABASES)("concurrent writes ($name)", (database) => {
  const t = useTestApp(database);
  let key: string;
  beforeEach(async () => {
    key = (await t.newProject({ plan: "unlimited" })).key;
  });
  const all = <T>(work: (n: number) => Promise<T>) => Promise.all(Array.from({ length: N }, (_, n) => work(n)));

  it(`${N} saves of the same new content make exactly one version; all answer its hash, one created it`, async () => {
    await t.request("POST", "/api/v2/prompts", { key, body: promptBody(0) });
    const sections = promptBody(99).sections;
    const results = await all(() => t.request("PUT", "/api/v2/prompts/prompt-0", { key, body: { sections } }));
    expect(results.map((r) => r.status)).toEqual(Array(N).fill(200));
    expect(new Set(results.map((r) => r.body.data.version)).size).toBe(1);
    expect(results.filter((r) => r.body.data.created)).toHaveLength(1);
    const versions = (await t.request("GET", "/api/v2/prompts/prompt-0/versions", { key })).body.data;
    expect(versions.versions).toHaveLength(2);
    expect(versions.latest_version).toBe(results[0]!.body.data.version);
  });

  it(`${N} saves of different content make ${N} versions and latest ends on one of them`, async () => {
    await t.request("POST", "/api/v2/prompts", { key, body: promptBody(0) });
    const results = await all((n) =>
      t.request("PUT", "/api/v2/prompts/prompt-0", { key, body: { sections: promptBody(100 + n).sections } }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(N).fill(200));
    expect(results.every((r) => r.body.data.created)).toBe(true);
    const hashes = results.map((r) => r.body.data.version);
    const versions = (await t.request("GET", "/api/v2/prompts/prompt-0/versions", { key })).body.data;
    expect(versions.versions).toHaveLength(N + 1);
    expect(hashes).toContain(versions.latest_version);
    // Each saved version is complete: readable with all of its sections.
    for (const hash of hashes) {
      const read = await t.request("GET", `/api/v2/prompts/prompt-0?version=${hash}`, { key });
      expect(read.body.data.sections).toHaveLength(2);
    }
  });

  it(`the 6th create in a Free project is refused even when ${N} race`, async () => {
    const results = await all((n) => t.request("POST", "/api/v2/prompts", { body: promptBody(n) }));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(N - 5).fill(403)]);
    expect((await t.request("GET", "/api/v2/prompts")).body.data.prompts).toHaveLength(5);
  });

  it(`${N} creates with the same name get distinct derived ids`, async () => {
    const results = await all((n) =>
      t.request("POST", "/api/v2/prompts", { key, body: { ...promptBody(n), name: "Same Name" } }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(N).fill(201));
    const ids = results.map((r) => r.body.data.id).sort();
    expect(new Set(ids).size).toBe(N);
    expect(ids).toContain("same-name");
  });

  it(`${N} creates with the same explicit id: one wins, the rest get 409`, async () => {
    const results = await all((n) =>
      t.request("POST", "/api/v2/prompts", { key, body: { ...promptBody(n), id: "contested" } }),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(N - 1).fill(409)]);
  });

  it(`${N} concurrent publishes leave production on one of the published versions`, async () => {
    await t.request("POST", "/api/v2/prompts", { key, body: promptBody(0) });
    const hashes: string[] = [];
    for (let n = 1; n <= N; n++) {
      hashes.push(
        (await t.request("PUT", "/api/v2/prompts/prompt-0", { key, body: { sections: promptBody(n).sections } })).body
          .data.version,
      );
    }
    const results = await all((n) =>
      t.request("POST", "/api/v2/prompts/prompt-0/publish", { key, body: { version: hashes[n] } }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(N).fill(200));
    const production = (await t.request("GET", "/api/v2/prompts/prompt-0", { key })).body.data;
    expect(hashes).toContain(production.version);
    expect(production.production_version).toBe(production.version);
  });

  it("saves and publishes racing each other end with pointers on existing versions", async () => {
    await t.request("POST", "/api/v2/prompts", { key, body: promptBody(0, { publish: true }) });
    const results = await all((n) =>
      n % 2 === 0
        ? t.request("PUT", "/api/v2/prompts/prompt-0", {
            key,
            body: { sections: promptBody(200 + n).sections, publish: n % 4 === 0 },
          })
        : t.request("POST", "/api/v2/prompts/prompt-0/publish", { key }),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const versions = (await t.request("GET", "/api/v2/prompts/prompt-0/versions", { key })).body.data;
    const known = new Set(versions.versions.map((v: { version: string }) => v.version));
    expect(known.has(versions.production_version)).toBe(true);
    expect(known.has(versions.latest_version)).toBe(true);
  });
});
