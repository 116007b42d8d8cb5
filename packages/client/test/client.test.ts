import { describe, expect, test } from "vitest";
import {
  MissingVariablesError,
  type PromptChange,
  PromptstoreError,
  PromptstoreNetworkError,
  PromptstoreTimeoutError,
} from "../src/index.js";
import { countingFetch, DATABASES, SECTIONS, sections, useFixture, waitFor } from "./support/harness.js";

const HASH = /^[0-9a-f]{64}$/;

describe.each(DATABASES)("client against the real server ($name)", (database) => {
  const fx = useFixture(database);

  test("every typed method round-trips: create, get (version, guard), save, publish, versions, list, v1", async () => {
    const server = await fx.start();
    const client = fx.client({ baseUrl: server.url, mode: "none" });

    const created = await client.create({ name: "Support Bot", description: "First-line support", sections: SECTIONS });
    expect(created).toMatchObject({ id: "support-bot", name: "Support Bot", published: false });
    expect(created.version).toMatch(HASH);

    const first = await client.get("support-bot");
    expect(first).toMatchObject({
      id: "support-bot",
      label: "latest",
      production_version: null,
      version: created.version,
    });
    expect(first.variables).toEqual(["company", "language"]);
    expect(first.prompt).toContain("<Role>\nYou help customers of {{ company }}.\n</Role>");
    const unguarded = await client.get("support-bot", { guard: false });
    expect(first.prompt.startsWith(unguarded.prompt)).toBe(true);
    expect(first.prompt.length).toBeGreaterThan(unguarded.prompt.length);

    const saved = await client.save("support-bot", { sections: sections("v2"), message: "second" });
    expect(saved).toMatchObject({ id: "support-bot", created: true, published: false });
    const again = await client.save("support-bot", { sections: sections("v2") });
    expect(again).toMatchObject({ version: saved.version, created: false });

    expect((await client.get("support-bot", { version: "latest" })).version).toBe(saved.version);
    expect((await client.get("support-bot", { version: created.version.slice(0, 7) })).version).toBe(created.version);

    const published = await client.publish("support-bot", created.version.slice(0, 8));
    expect(published).toEqual({ id: "support-bot", version: created.version, published: true, label: "production" });
    expect(await client.get("support-bot")).toMatchObject({ label: "production", version: created.version });
    expect((await client.publish("support-bot")).version).toBe(saved.version);

    const history = await client.versions("support-bot");
    expect(history.production_version).toBe(saved.version);
    expect(history.latest_version).toBe(saved.version);
    expect(history.versions.map((v) => v.version)).toEqual([saved.version, created.version]);
    expect(history.versions[0]?.message).toBe("second");

    const list = await client.list();
    expect(list.prompts.map((p) => p.id)).toEqual(["support-bot"]);
    expect(list.prompts[0]).toMatchObject({ production_version: saved.version, latest_version: saved.version });
    await client.create({ name: "Second", markdown: "# Role\nHi" });
    const page = await client.list({ limit: 1 });
    expect(page.prompts).toHaveLength(1);
    expect(page.next_cursor).toEqual(expect.any(String));
    const all: string[] = [];
    for await (const item of client.listAll()) all.push(item.id);
    expect(all).toEqual(["support-bot", "second"]);

    const v1 = await client.getV1("support-bot");
    expect(v1).toMatchObject({ id: "support-bot", version: saved.version, tools: [], label: "production" });
    expect(Object.keys(v1).sort()).toEqual(
      [
        ...["id", "prompt", "sections", "tools", "version", "created_at", "updated_at"],
        ...["name", "description", "variables", "label", "production_version"],
      ].sort(),
    );
    expect(v1.prompt).toBe((await client.get("support-bot")).prompt);
  });

  test("a failure is a typed PromptstoreError with status, the envelope's message and the request id", async () => {
    const server = await fx.start();
    const client = fx.client({ baseUrl: server.url, mode: "none" });

    const missing = await client.get("nope").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PromptstoreError);
    const error = missing as PromptstoreError;
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/not found/);
    expect(error.requestId).toEqual(expect.any(String));
    expect(error.request).toBe("GET /api/v2/prompts/nope");

    const bad = (await client.create({ name: "x", sections: [] }).catch((e: unknown) => e)) as PromptstoreError;
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(/^sections: must contain at least one section/);

    const traced = fx.client({ baseUrl: server.url, mode: "none", headers: { "x-request-id": "trace-123" } });
    const kept = (await traced.versions("nope").catch((e: unknown) => e)) as PromptstoreError;
    expect(kept.requestId).toBe("trace-123");

    const wrongKey = fx.client({ baseUrl: server.url, mode: "none", apiKey: "ps_wrong" });
    const unauthorized = (await wrongKey.list().catch((e: unknown) => e)) as PromptstoreError;
    expect(unauthorized).toMatchObject({ status: 401, message: "x-api-key: invalid API key" });
  });

  test("a second get is served from memory: no request (ttl mode)", async () => {
    const server = await fx.start();
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, mode: "ttl", fetch: counter.fetch });
    await client.create({ name: "Memo", sections: SECTIONS });
    const before = counter.calls.length;
    const first = await client.get("memo");
    expect(counter.calls.length).toBe(before + 1);
    for (let i = 0; i < 100; i++) expect(await client.get("memo")).toBe(first);
    expect(counter.calls.length).toBe(before + 1);
    // Another reference, or the other guard, is another read.
    await client.get("memo", { guard: false });
    await client.get("memo", { version: "latest" });
    expect(counter.calls.length).toBe(before + 3);
  });

  test("a version named by its full hash is kept for good, whatever the TTL", async () => {
    const server = await fx.start();
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, mode: "ttl", ttlMs: 1, fetch: counter.fetch });
    const { version } = await client.create({ name: "Pinned", sections: SECTIONS });
    const first = await client.get("pinned", { version });
    expect(first.label).toBe("version");
    const calls = counter.calls.length;
    await new Promise((r) => setTimeout(r, 20));
    await client.save("pinned", { sections: sections("v2"), publish: true });
    const after = counter.calls.length;
    for (let i = 0; i < 10; i++) expect(await client.get("pinned", { version })).toBe(first);
    expect(counter.calls.length).toBe(after);
    expect(after).toBe(calls + 1);
  });

  test("ttl mode: past the TTL the old read is served at once while a new one is fetched (stale-while-revalidate)", async () => {
    const server = await fx.start();
    const counter = countingFetch();
    const changes: PromptChange[] = [];
    const client = fx.client({
      baseUrl: server.url,
      mode: "ttl",
      ttlMs: 300,
      fetch: counter.fetch,
      onChange: (c) => changes.push(c),
    });
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Swr", sections: sections("v1"), publish: true });
    expect((await client.get("swr")).version).toBe(v1.version);
    const v2 = await writer.save("swr", { sections: sections("v2"), publish: true });
    // Within the TTL: the old version, from memory.
    expect((await client.get("swr")).version).toBe(v1.version);
    await new Promise((r) => setTimeout(r, 350));
    const reads = counter.calls.length;
    // Past it: still the old one at once, and one read in the background.
    expect((await client.get("swr")).version).toBe(v1.version);
    expect((await client.get("swr")).version).toBe(v1.version);
    await waitFor(() => changes.length === 2, 5_000, "the background read");
    expect(counter.calls.length).toBe(reads + 1);
    expect((await client.get("swr")).version).toBe(v2.version);
    expect(changes).toEqual([
      { promptId: "swr", ref: "production", guard: true, version: v1.version, previousVersion: null },
      { promptId: "swr", ref: "production", guard: true, version: v2.version, previousVersion: v1.version },
    ]);
  });

  test("this client's own publish is served by its very next get", async () => {
    const server = await fx.start();
    const client = fx.client({ baseUrl: server.url, mode: "ttl" });
    const v1 = await client.create({ name: "Own", sections: sections("v1"), publish: true });
    expect((await client.get("own")).version).toBe(v1.version);
    const v2 = await client.save("own", { sections: sections("v2") });
    expect((await client.get("own", { version: "latest" })).version).toBe(v2.version);
    await client.publish("own");
    expect((await client.get("own")).version).toBe(v2.version);
    await client.publish("own", v1.version);
    expect((await client.get("own")).version).toBe(v1.version);
  });

  test("mode none asks the service every time, and opens no stream", async () => {
    const server = await fx.start();
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, mode: "none", fetch: counter.fetch });
    await client.create({ name: "Fresh", sections: SECTIONS });
    const before = counter.calls.length;
    await client.get("fresh");
    await client.get("fresh");
    expect(counter.calls.length).toBe(before + 2);
    expect(await client.ready()).toBe(false);
    expect(counter.calls.some((c) => c.url.includes("/api/v2/events"))).toBe(false);
  });

  test("the fallback is served when the service cannot be reached and nothing is held", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const client = fx.client({
      baseUrl: proxy.url,
      mode: "ttl",
      retries: 1,
      retryBaseDelayMs: 1,
      fallback: { greeter: "Hello {{ name }}, from the fallback." },
    });
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    await writer.create({ name: "Held", sections: SECTIONS, publish: true });
    const held = await client.get("held");
    proxy.down = true;

    const given = await client.get("greeter");
    expect(given).toMatchObject({ id: "greeter", fallback: true, label: "fallback", variables: ["name"] });
    expect(client.fill(given, { name: "Ada" })).toBe("Hello Ada, from the fallback.");
    const perCall = await client.get("other", { fallback: { prompt: "Per call", name: "Other" } });
    expect(perCall).toMatchObject({ prompt: "Per call", name: "Other", fallback: true });
    expect(perCall.sections[0]?.content).toBe("Per call");
    // What is held is served, not the fallback.
    expect(await client.get("held", { fallback: "unused" })).toBe(held);
    // No fallback: the failure itself.
    const error = await client.get("unknown").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptstoreNetworkError);
    expect((error as PromptstoreError).status).toBe(0);
    // Up again: the service's version, not the fallback.
    proxy.down = false;
    await writer.create({ name: "Greeter", sections: [{ title: "Role", content: "Hi {{ name }}" }] });
    expect((await client.get("greeter")).fallback).toBeUndefined();
    // A 404 is an answer: no fallback for it.
    const notFound = await client.get("absent", { fallback: "x" }).catch((e: unknown) => e);
    expect((notFound as PromptstoreError).status).toBe(404);
  });

  test("a 500 on a read is retried with backoff; a 500 on a write is not", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const client = fx.client({ baseUrl: proxy.url, mode: "none", retries: 2, retryBaseDelayMs: 10 });
    await client.create({ name: "Retry", sections: SECTIONS });

    proxy.failNext(1, 500, "/api/v2/prompts/retry");
    const before = proxy.count("/api/v2/prompts/retry");
    const read = await client.get("retry");
    expect(read.id).toBe("retry");
    expect(proxy.count("/api/v2/prompts/retry") - before).toBe(2);

    proxy.failNext(3, 503, "/api/v2/prompts/retry");
    const exhausted = (await client.get("retry").catch((e: unknown) => e)) as PromptstoreError;
    expect(exhausted).toBeInstanceOf(PromptstoreError);
    expect(exhausted.status).toBe(503);
    expect(exhausted.message).toBe("injected failure 503");
    expect(exhausted.requestId).toMatch(/^proxy-failure-/);

    proxy.failNext(1, 500, "/api/v2/prompts/retry/publish");
    const writes = proxy.count("/api/v2/prompts/retry/publish");
    const failed = (await client.publish("retry").catch((e: unknown) => e)) as PromptstoreError;
    expect(failed.status).toBe(500);
    expect(proxy.count("/api/v2/prompts/retry/publish") - writes).toBe(1);
  });

  test("a request without an answer in timeoutMs is aborted: a typed timeout, retried for reads", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    // The prompt is made with the default timeout: a loaded machine may take more than 200 ms to save it.
    await fx.client({ baseUrl: server.url }).create({ name: "Slow", sections: SECTIONS });
    const client = fx.client({ baseUrl: proxy.url, mode: "none", timeoutMs: 200, retries: 0 });

    proxy.delayNext(1, 1_000, "/api/v2/prompts/slow");
    const started = Date.now();
    const error = await client.get("slow").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptstoreTimeoutError);
    expect((error as PromptstoreTimeoutError).timeoutMs).toBe(200);
    expect(Date.now() - started).toBeLessThan(900);

    // The retry's own answer gets a second, so that only the delayed first try times out.
    const retrying = fx.client({ baseUrl: proxy.url, mode: "none", timeoutMs: 1_000, retries: 1, retryBaseDelayMs: 1 });
    proxy.delayNext(1, 5_000, "/api/v2/prompts/slow");
    expect((await retrying.get("slow")).id).toBe("slow");
  });

  test("fill: missing variables are a typed error naming each one", async () => {
    const server = await fx.start();
    const client = fx.client({ baseUrl: server.url, mode: "ttl" });
    await client.create({ name: "Vars", sections: SECTIONS });
    const prompt = await client.get("vars", { guard: false });
    const error = (() => {
      try {
        client.fill(prompt, { company: "Acme" });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MissingVariablesError);
    expect((error as MissingVariablesError).missing).toEqual(["language"]);
    expect(client.fill(prompt, { company: "Acme", language: "French" })).toBe(
      "<Role>\nYou help customers of Acme.\n</Role>\n\n<Output_Format>\nAnswer in French, in three sentences or fewer.\n</Output_Format>",
    );
  });
});
