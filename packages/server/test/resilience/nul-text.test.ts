/**
 * Found by test/resilience/fuzz-properties.test.ts on PostgreSQL: text holding U+0000 (NUL) was stored on
 * SQLite and answered 500 on PostgreSQL (its text type refuses NUL), in bodies and in the dashboard's path
 * ids (`/api/dashboard/projects/a%00b/...`). Now a body's NUL is a 400 naming the field and a path id with
 * one is not found, on both databases, and nothing is written.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { dumpStore } from "../support/fuzz.js";

const NUL = "contains U+0000 (NUL), which cannot be stored";

describe.each(DATABASES)("text with NUL ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp(database);
  });
  afterEach(async () => {
    await t.close();
  });

  it("is a 400 naming the field in every body that takes text, and writes nothing", async () => {
    const before = await dumpStore(t.store);
    const cases: [string, string, unknown, string][] = [
      ["POST", "/api/v2/prompts", { name: "a\u0000b", markdown: "# A\nx" }, `name: ${NUL}`],
      ["POST", "/api/v2/prompts", { name: "n", markdown: "# A\nx\u0000y" }, `markdown: ${NUL}`],
      ["POST", "/api/v2/prompts", { name: "n", description: "\u0000", markdown: "# A\nx" }, `description: ${NUL}`],
      ["POST", "/api/v2/prompts", { name: "n", markdown: "# A\nx", message: "m\u0000" }, `message: ${NUL}`],
      [
        "POST",
        "/api/v2/prompts",
        { name: "n", sections: [{ title: "t", content: "c\u0000" }] },
        `sections[0].content: ${NUL}`,
      ],
      [
        "PUT",
        "/api/v2/prompts/missing",
        { sections: [{ title: "t\u0000", content: "c" }] },
        `sections[0].title: ${NUL}`,
      ],
      ["POST", "/api/v2/webhooks", { url: "https://example.com/\u0000", events: ["prompt.published"] }, `url: ${NUL}`],
    ];
    for (const [method, url, body, error] of cases) {
      const res = await t.request(method, url, { body });
      expect({ status: res.status, body: res.body }, error).toEqual({ status: 400, body: { success: false, error } });
    }
    expect(await dumpStore(t.store)).toBe(before);
  });

  it("in a dashboard path id is not found, like any unknown id", async () => {
    const owner = await member(t, "owner");
    const before = await dumpStore(t.store);
    const p = t.project.projectId;
    const o = t.project.orgId;
    const cases: [string, string, unknown, string][] = [
      ["GET", "/api/dashboard/projects/a%00b/prompts", undefined, "project a\u0000b not found"],
      ["GET", "/api/dashboard/projects/a%00b/webhooks", undefined, "project a\u0000b not found"],
      ["GET", "/api/dashboard/projects/a%00b/keys", undefined, "project a\u0000b not found"],
      ["GET", "/api/dashboard/orgs/a%00b/usage", undefined, "organization a\u0000b not found"],
      ["GET", "/api/dashboard/orgs/a%00b/members", undefined, "organization a\u0000b not found"],
      ["PATCH", `/api/dashboard/orgs/${o}/members/u%00`, { role: "viewer" }, "member u\u0000 not found"],
      ["DELETE", `/api/dashboard/orgs/${o}/members/u%00`, undefined, "member u\u0000 not found"],
      ["DELETE", `/api/dashboard/projects/${p}/keys/k%00`, undefined, "key k\u0000 not found"],
    ];
    for (const [method, url, body, error] of cases) {
      const res = await owner.call(method, url, body === undefined ? {} : { body });
      expect({ status: res.status, body: res.body }, url).toEqual({ status: 404, body: { success: false, error } });
    }
    expect(await dumpStore(t.store)).toBe(before);
  });
});
