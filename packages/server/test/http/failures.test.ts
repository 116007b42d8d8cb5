import { describe, expect, it } from "vitest";
import { promptBody, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("service-side failures ($name)", (database) => {
  it("answer 500 in the envelope without a stack trace, and healthz says 503", async () => {
    const t = await testApp(database);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    await t.store.close();
    try {
      const read = await t.request("GET", "/api/v2/prompts", { key: t.key });
      // The key lookup itself needs the database: whichever step fails, it is a 500 envelope.
      expect(read.status).toBe(500);
      expect(read.body).toEqual({ success: false, error: "internal error; retry with backoff" });
      expect(JSON.stringify(read.body)).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(read.headers["x-request-id"]).toBeTruthy();
      const health = await t.request("GET", "/healthz", { key: null });
      expect(health.status).toBe(503);
      expect(health.body).toEqual({ success: false, error: "database unreachable" });
    } finally {
      await t.app.server.close();
      await t.close().catch(() => {});
    }
  });
});

describe("logging", () => {
  it("logs a failure once, with the request id, through the lazy per-request logger", async () => {
    const { Writable } = await import("node:stream");
    const { buildApp } = await import("../../src/http/app.js");
    const { defaultConfig } = await import("../../src/config.js");
    const { freshStore } = await import("../support/databases.js");
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const fresh = await freshStore(DATABASES[0]!);
    const app = await buildApp({ store: fresh.store, config: defaultConfig(), logger: { level: "warn", stream } });
    try {
      const key = await (async () => {
        const org = await app.tenants.createOrganization("o", "free");
        const project = await app.tenants.createProject(org.id, "p");
        return (await app.tenants.createApiKey(project.id)).key;
      })();
      expect(
        (await app.server.inject({ method: "GET", url: "/api/v2/prompts", headers: { "x-api-key": key } })).statusCode,
      ).toBe(200);
      expect(lines).toEqual([]); // nothing at warn for a good request
      await fresh.store.close();
      const res = await app.server.inject({
        method: "GET",
        url: "/api/v2/prompts",
        headers: { "x-api-key": key, "x-request-id": "trace-42" },
      });
      expect(res.statusCode).toBe(500);
      const logged = lines.filter((l) => l.reqId === "trace-42");
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 50, msg: "request failed" });
    } finally {
      await app.server.close();
      await fresh.close().catch(() => {});
    }
  });
});
