import { assemble, withGuard } from "@promptstore/core/prompts/assemble";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { beforeEach, describe, expect, it } from "vitest";
import { promptBody, testApp, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("read cache ($name)", (database) => {
  const t = useTestApp(database);
  let key: string;
  beforeEach(async () => {
    key = (await t.newProject({ plan: "unlimited" })).key;
  });
  const get = async (url: string) => (await t.request("GET", url, { key })).body;

  it("serves identical bytes from cache, and a publish is visible on the very next read", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }), key })).body.data
      .version;
    const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections }, key }))
      .body.data.version;
    const first = await t.request("GET", "/api/v2/prompts/prompt-1", { key });
    const again = await t.request("GET", "/api/v2/prompts/prompt-1", { key });
    expect(again.body).toEqual(first.body);
    expect(first.body.data.version).toBe(v1);
    await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: v2 }, key });
    expect((await get("/api/v2/prompts/prompt-1")).data.version).toBe(v2);
    expect((await get("/api/v1/prompts/prompt-1")).data.version).toBe(v2);
    await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: v1 }, key });
    expect((await get("/api/v2/prompts/prompt-1")).data.version).toBe(v1);
  });

  it("a save moves latest at once; a rename shows on pinned-version reads too", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1), key })).body.data.version;
    expect((await get("/api/v2/prompts/prompt-1?version=latest")).data.version).toBe(v1);
    expect((await get(`/api/v2/prompts/prompt-1?version=${v1}`)).data.name).toBe("Prompt 1");
    const v2 = (
      await t.request("PUT", "/api/v2/prompts/prompt-1", {
        body: { sections: promptBody(2).sections, name: "New" },
        key,
      })
    ).body.data.version;
    expect((await get("/api/v2/prompts/prompt-1?version=latest")).data.version).toBe(v2);
    expect((await get(`/api/v2/prompts/prompt-1?version=${v1}`)).data.name).toBe("New");
  });

  it("keeps guard variants and surfaces apart", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1), key });
    const guarded = (await get("/api/v2/prompts/prompt-1")).data.prompt;
    const bare = (await get("/api/v2/prompts/prompt-1?guard=false")).data.prompt;
    expect(guarded).not.toBe(bare);
    expect((await get("/api/v2/prompts/prompt-1")).data.prompt).toBe(guarded);
    expect((await get("/api/v1/prompts/prompt-1")).data.tools).toEqual([]);
    expect((await get("/api/v2/prompts/prompt-1")).data).not.toHaveProperty("tools");
  });

  it("does not leak across projects that use the same prompt id", async () => {
    const other = (await t.newProject({ plan: "unlimited" })).key;
    await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "same" }, key });
    await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(2), id: "same" }, key: other });
    // Whole texts: "number 1" alone would also be found in "number 10".
    const textOf = (n: number) =>
      withGuard(assemble(promptBody(n).sections.map((s) => ({ ...s, enabled: true }))), DEFAULT_GUARD_TEXT);
    expect((await get("/api/v2/prompts/same")).data.prompt).toBe(textOf(1));
    expect((await t.request("GET", "/api/v2/prompts/same", { key: other })).body.data.prompt).toBe(textOf(2));
  });

  it("never serves a stale production pointer while reads race publishes", async () => {
    const hashes: string[] = [];
    hashes.push(
      (await t.request("POST", "/api/v2/prompts", { body: promptBody(0, { publish: true }), key })).body.data.version,
    );
    for (let n = 1; n < 4; n++) {
      hashes.push(
        (await t.request("PUT", "/api/v2/prompts/prompt-0", { body: { sections: promptBody(n).sections }, key })).body
          .data.version,
      );
    }
    for (let round = 0; round < 20; round++) {
      const target = hashes[round % hashes.length]!;
      const readers = Array.from({ length: 5 }, () => get("/api/v2/prompts/prompt-0"));
      await t.request("POST", "/api/v2/prompts/prompt-0/publish", { body: { version: target }, key });
      await Promise.all(readers);
      // After the publish has answered, every read serves it.
      expect((await get("/api/v2/prompts/prompt-0")).data.version).toBe(target);
    }
  });
});

describe.each(DATABASES)("a reset, as after a lost change channel ($name)", (database) => {
  const t = useTestApp(database);

  it("drops cached reads and cached keys, so changes no one announced are seen", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
      .version;
    const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } })).body
      .data.version;
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v1);
    // Changes made behind the service's back: what another instance did while our listener was away.
    await t.store.db.updateTable("prompts").set({ production_version: v2 }).where("id", "=", "prompt-1").execute();
    await t.store.db.updateTable("api_keys").set({ revoked_at: new Date().toISOString() }).execute();
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v1);
    t.app.bus.publish({ kind: "reset" });
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).status).toBe(401);
    await t.store.db.updateTable("api_keys").set({ revoked_at: null }).execute();
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v2);
  });
});

describe("with the cache off (PROMPTSTORE_READ_CACHE=false)", () => {
  /**
   * A rename written straight into the database reaches no cache: only a read that goes to the database
   * sees it. With the cache on, the second read is the cached answer (so the test can tell); off, it is new.
   */
  async function secondReadAfterDirectRename(cacheOn: boolean): Promise<string[]> {
    const t = await testApp(DATABASES[0]!, { PROMPTSTORE_READ_CACHE: cacheOn });
    try {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) });
      const names = [];
      for (const url of ["/api/v2/prompts/prompt-1", "/api/v1/prompts/prompt-1"]) {
        names.push((await t.request("GET", url)).body.data.name);
      }
      await t.store.db.updateTable("prompts").set({ name: "Renamed behind the service" }).execute();
      for (const url of ["/api/v2/prompts/prompt-1", "/api/v1/prompts/prompt-1"]) {
        names.push((await t.request("GET", url)).body.data.name);
      }
      return names;
    } finally {
      await t.close();
    }
  }

  it("every read goes to the database", async () => {
    expect(await secondReadAfterDirectRename(false)).toEqual([
      "Prompt 1",
      "Prompt 1",
      "Renamed behind the service",
      "Renamed behind the service",
    ]);
    // The control: on, the same sequence serves the cached answers.
    expect(await secondReadAfterDirectRename(true)).toEqual(["Prompt 1", "Prompt 1", "Prompt 1", "Prompt 1"]);
  });

  it("reads still answer and follow publishes", async () => {
    const t = await testApp(DATABASES[0]!, { PROMPTSTORE_READ_CACHE: false });
    try {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
        .version;
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v1);
      const v2 = (
        await t.request("PUT", "/api/v2/prompts/prompt-1", {
          body: { sections: promptBody(2).sections, publish: true },
        })
      ).body.data.version;
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v2);
    } finally {
      await t.close();
    }
  });
});
