import { beforeEach, describe, expect, it } from "vitest";
import { ReadCache } from "../../src/http/reads/read-cache.js";
import { ChangeBus } from "../../src/service/events/change-bus.js";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("single flight: one database read per herd ($name)", (database) => {
  const t = useTestApp(database);
  let key: string;
  beforeEach(async () => {
    key = (await t.newProject({ plan: "unlimited" })).key;
  });
  const herd = (n: number, url: string) => Promise.all(Array.from({ length: n }, () => t.request("GET", url, { key })));

  it("200 clients re-reading right after a publish cause exactly one read, and all get the new version", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }), key })).body.data
      .version;
    const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections }, key }))
      .body.data.version;
    for (const target of [v2, v1, v2]) {
      expect((await herd(5, "/api/v2/prompts/prompt-1")).every((r) => r.status === 200)).toBe(true);
      await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: target }, key });
      const before = t.app.prompts.reads;
      const answers = await herd(200, "/api/v2/prompts/prompt-1");
      expect(t.app.prompts.reads - before).toBe(1);
      expect(answers.every((r) => r.status === 200 && r.body.data.version === target)).toBe(true);
    }
  });

  it("variants and surfaces do not share a read", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }), key });
    const before = t.app.prompts.reads;
    await Promise.all([
      herd(50, "/api/v2/prompts/prompt-1"),
      herd(50, "/api/v2/prompts/prompt-1?guard=false"),
      herd(50, "/api/v1/prompts/prompt-1"),
    ]);
    expect(t.app.prompts.reads - before).toBe(3);
  });

  it("a failure reaches every client that waited for it, and is not cached", async () => {
    const answers = await herd(100, "/api/v2/prompts/missing");
    expect(answers.every((r) => r.status === 404 && r.body.error === "prompt missing not found")).toBe(true);
    const before = t.app.prompts.reads;
    expect((await t.request("GET", "/api/v2/prompts/missing", { key })).status).toBe(404);
    expect(t.app.prompts.reads - before).toBe(1);
    await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "missing" }, key });
    expect((await t.request("GET", "/api/v2/prompts/missing", { key })).status).toBe(200);
  });
});

describe("ReadCache.load", () => {
  /** Settles a few milliseconds later with what `settle` returns or throws, as a database read would. */
  const later = <T>(settle: () => T) =>
    new Promise<T>((resolve, reject) =>
      setTimeout(() => {
        try {
          resolve(settle());
        } catch (error) {
          reject(error);
        }
      }, 5),
    );

  it("gives concurrent misses one read and its bytes, then serves them from the cache", async () => {
    const cache = new ReadCache(new ChangeBus());
    let reads = 0;
    const read = () => later(() => Buffer.from(`read ${++reads}`));
    const g = cache.generation("p", "x");
    const all = await Promise.all([1, 2, 3].map(() => cache.load("p", "x", g, "v", read)));
    expect(reads).toBe(1);
    expect(all.map(String)).toEqual(["read 1", "read 1", "read 1"]);
    expect(String(cache.get("p", "x", g, "v"))).toBe("read 1");
  });

  it("shares a failure with every waiter and forgets it once settled", async () => {
    const cache = new ReadCache(new ChangeBus());
    let reads = 0;
    const failing = () =>
      later(() => {
        throw new Error(`failure ${++reads}`);
      });
    const g = cache.generation("p", "x");
    const all = await Promise.allSettled([1, 2, 3].map(() => cache.load("p", "x", g, "v", failing)));
    expect(reads).toBe(1);
    expect(all.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "ok"))).toEqual([
      "failure 1",
      "failure 1",
      "failure 1",
    ]);
    expect(cache.get("p", "x", g, "v")).toBeUndefined();
    await expect(cache.load("p", "x", g, "v", failing)).rejects.toThrow("failure 2");
  });

  it("does not join a read that started before a change", async () => {
    const bus = new ChangeBus();
    const cache = new ReadCache(bus);
    let reads = 0;
    const read = () => later(() => Buffer.from(`read ${++reads}`));
    const first = cache.load("p", "x", cache.generation("p", "x"), "v", read);
    bus.publish({ kind: "prompt", projectId: "p", promptId: "x" });
    const second = cache.load("p", "x", cache.generation("p", "x"), "v", read);
    expect([String(await first), String(await second)]).toEqual(["read 1", "read 2"]);
  });
});
