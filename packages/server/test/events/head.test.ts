/**
 * Found by test/resilience/fuzz-properties.test.ts: HEAD /api/v2/events (Fastify answers HEAD with the GET
 * handler) took a stream slot and wrote nothing, ever: no status, no headers, the connection and the
 * organization's slot held until the client left. HEAD now answers the stream's headers and ends.
 */
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { head, rawRequest } from "../support/raw-http.js";

describe.each(DATABASES)("HEAD /api/v2/events ($name)", (database) => {
  let t: TestApp;
  let port: number;
  beforeEach(async () => {
    t = await testApp(database);
    await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await t.close();
  });

  const headRequest = (key: string) =>
    rawRequest(
      port,
      head(["HEAD /api/v2/events HTTP/1.1", "Host: localhost", `x-api-key: ${key}`, "Connection: close"]),
      2_000,
    );

  it("answers the stream's headers at once, with no body, and holds no stream slot", async () => {
    // The free plan's cap is a handful of streams: more HEADs than that must all be answered.
    for (let i = 0; i < 12; i++) {
      const res = await headRequest(t.key);
      expect({ status: res.status, type: res.headers["content-type"], body: res.body }).toEqual({
        status: 200,
        type: "text/event-stream; charset=utf-8",
        body: "",
      });
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("still refuses a wrong key with 401", async () => {
    const res = await t.app.server.inject({
      method: "HEAD",
      url: "/api/v2/events",
      headers: { "x-api-key": "ps_wrong" },
    });
    expect(res.statusCode).toBe(401);
  });
});
