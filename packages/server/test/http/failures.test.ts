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
