import { describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { dumpStore } from "../support/fuzz.js";

describe.each(DATABASES)("per-organization rate limits ($name)", (database) => {
  const t = useTestApp(database);

  it("every authenticated response carries the X-RateLimit-* headers, counting down", async () => {
    const first = await t.request("GET", "/api/v2/prompts");
    const second = await t.request("GET", "/api/v2/prompts/missing");
    expect(first.headers["x-ratelimit-limit"]).toBe("60");
    expect(first.headers["x-ratelimit-remaining"]).toBe("59");
    expect(second.headers["x-ratelimit-remaining"]).toBe("58");
    const reset = Number(first.headers["x-ratelimit-reset"]);
    expect(Number.isInteger(reset) && reset >= 1 && reset <= 60).toBe(true);
  });

  it("unauthenticated responses are not counted and carry no budget", async () => {
    const res = await t.request("GET", "/api/v2/prompts", { key: "ps_wrong" });
    expect(res.status).toBe(401);
    expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
    expect((await t.request("GET", "/api/v2/prompts")).headers["x-ratelimit-remaining"]).toBe("59");
  });

  it("the 61st request in a minute is 429 with Retry-After equal to X-RateLimit-Reset", async () => {
    for (let n = 0; n < 60; n++) expect((await t.request("GET", "/api/v2/prompts")).status).toBe(200);
    const before = await dumpStore(t.store);
    const refused = await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/^rate limit exceeded/) });
    expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
    expect(refused.headers["retry-after"]).toBe(refused.headers["x-ratelimit-reset"]);
    // Nothing was written by the refused create: every table as it was.
    expect(await dumpStore(t.store)).toBe(before);
  });

  it("two projects of one organization share the budget; another organization is unaffected", async () => {
    const sibling = await t.newProject({ orgId: t.project.orgId });
    const stranger = await t.newProject();
    for (let n = 0; n < 30; n++) await t.request("GET", "/api/v2/prompts");
    for (let n = 0; n < 30; n++) await t.request("GET", "/api/v2/prompts", { key: sibling.key });
    expect((await t.request("GET", "/api/v2/prompts")).status).toBe(429);
    expect((await t.request("GET", "/api/v2/prompts", { key: sibling.key })).status).toBe(429);
    const other = await t.request("GET", "/api/v2/prompts", { key: stranger.key });
    expect(other.status).toBe(200);
    expect(other.headers["x-ratelimit-remaining"]).toBe("59");
  });

  it("v1 requests count against the same budget", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const v1 = await t.request("GET", "/api/v1/prompts/prompt-1");
    expect(v1.headers["x-ratelimit-remaining"]).toBe("58");
    expect((await t.request("GET", "/api/v2/prompts")).headers["x-ratelimit-remaining"]).toBe("57");
  });

  it("pro allows exactly 1000 a minute: the 1001st is 429", async () => {
    const pro = await t.newProject({ plan: "pro" });
    for (let n = 0; n < 1000; n++) {
      const res = await t.request("GET", "/api/v2/prompts", { key: pro.key });
      if (res.status !== 200) throw new Error(`request ${n + 1} of 1000: ${res.status}`);
      if (n === 999) expect(res.headers["x-ratelimit-remaining"]).toBe("0");
    }
    const refused = await t.request("GET", "/api/v2/prompts", { key: pro.key });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(
      /^rate limit exceeded: the pro plan allows 1000 requests per minute; retry in \d+ s$/,
    );
  });

  it("pro allows 1000 a minute and unlimited sends no budget at all", async () => {
    const pro = await t.newProject({ plan: "pro" });
    expect((await t.request("GET", "/api/v2/prompts", { key: pro.key })).headers["x-ratelimit-limit"]).toBe("1000");
    const unlimited = await t.newProject({ plan: "unlimited" });
    for (let n = 0; n < 70; n++)
      expect((await t.request("GET", "/api/v2/prompts", { key: unlimited.key })).status).toBe(200);
    expect(
      (await t.request("GET", "/api/v2/prompts", { key: unlimited.key })).headers["x-ratelimit-limit"],
    ).toBeUndefined();
  });

  it("a plan change takes effect at once on this instance", async () => {
    for (let n = 0; n < 60; n++) await t.request("GET", "/api/v2/prompts");
    expect((await t.request("GET", "/api/v2/prompts")).status).toBe(429);
    await t.app.tenants.setPlan(t.project.orgId, "pro");
    const res = await t.request("GET", "/api/v2/prompts");
    expect(res.status).toBe(200);
    expect(res.headers["x-ratelimit-limit"]).toBe("1000");
  });
});
