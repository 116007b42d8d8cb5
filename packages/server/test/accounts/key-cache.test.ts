import { describe, expect, it } from "vitest";
import { KeyCache } from "../../src/service/accounts/key-cache.js";
import { ChangeBus } from "../../src/service/events/change-bus.js";
import type { KeyGrant } from "../../src/store/accounts/tenants.js";

const grant: KeyGrant = {
  keyId: "key_1",
  projectId: "proj_1",
  projectName: "P",
  orgId: "org_1",
  plan: "free",
  actor: "key:ps_123",
  access: "publish",
};

describe("key cache", () => {
  it("does not keep a grant looked up before a revocation was announced", async () => {
    const bus = new ChangeBus();
    const lookups: ((found: KeyGrant | undefined) => void)[] = [];
    const cache = new KeyCache((_key) => new Promise((resolve) => lookups.push(resolve)), bus);
    // A request's lookup is under way when the revocation is announced, and finds the key still valid.
    const first = cache.resolve("ps_key");
    bus.publish({ kind: "tenants" });
    lookups[0]!(grant);
    expect(await first).toEqual(grant);
    // The next request must ask the database again, which now refuses the key.
    const second = cache.resolve("ps_key");
    expect(lookups).toHaveLength(2);
    lookups[1]!(undefined);
    expect(await second).toBe(undefined);
    expect(cache.peek("ps_key")).toBe(undefined);
  });

  it("keeps a grant looked up with no change in between", async () => {
    const bus = new ChangeBus();
    let lookups = 0;
    const cache = new KeyCache(async () => {
      lookups++;
      return grant;
    }, bus);
    expect(await cache.resolve("ps_key")).toEqual(grant);
    expect(cache.resolve("ps_key")).toEqual(grant);
    expect(lookups).toBe(1);
  });
});
