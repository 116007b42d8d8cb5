/**
 * What a newcomer met with the SDK (issue 20): a held read served before a fallback also with `cache: false`,
 * `ready()` rejecting with the typed 401 for an invalid key, and a first `get()` making one read, not two.
 */
import { describe, expect, test } from "vitest";
import { PromptstoreError } from "../src/index.js";
import { countingFetch, DATABASES, SECTIONS, useFixture, waitFor } from "./support/harness.js";

describe.each(DATABASES)("what a newcomer met ($name)", (database) => {
  const fx = useFixture(database);

  test("get(id, { cache: false, fallback }) with the service down serves the held read, not the fallback", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const client = fx.client({ baseUrl: proxy.url, mode: "ttl", retries: 0 });
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    await writer.create({ name: "Held", sections: SECTIONS, publish: true });
    const held = await client.get("held");
    proxy.down = true;
    expect(await client.get("held", { cache: false, fallback: "the fallback" })).toBe(held);
    // Nothing held for that reference: the fallback.
    const other = await client.get("held", { cache: false, version: "latest", fallback: "the fallback" });
    expect(other).toMatchObject({ fallback: true, prompt: "the fallback" });
  });

  test("ready() with an invalid key rejects with the typed 401", async () => {
    const server = await fx.start();
    const client = fx.client({ baseUrl: server.url, apiKey: "ps_not-a-key" });
    const error = await client.ready(5_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptstoreError);
    expect((error as PromptstoreError).status).toBe(401);
    expect((error as PromptstoreError).requestId).toEqual(expect.any(String));
  });

  test("a first get() makes one read, not one at the call and one when the stream goes live", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    await writer.create({ name: "Once", sections: SECTIONS, publish: true });
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, fetch: counter.fetch });
    await client.get("once");
    await waitFor(() => client.status.stream === "live" && client.status.reading === 0, 10_000, "the stream");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(counter.calls.filter((c) => c.url.includes("/api/v2/prompts/once")).length).toBe(1);
    // And a publish right after is still seen: the read was covered by the stream.
    const v2 = await writer.save("once", { sections: [{ title: "Role", content: "v2" }], publish: true });
    await waitFor(async () => (await client.get("once")).version === v2.version, 10_000, "the publish");
  });
});
