/**
 * A deleted prompt, against the real server: `delete()` answers `{ id, deleted: true }`, and a client that
 * holds the prompt drops it from memory when `prompt.deleted` arrives on the stream, so its next `get()` asks
 * the service and gets the 404 (or, when the service cannot be reached, the fallback).
 */
import { describe, expect, test } from "vitest";
import { type PromptEvent, type Promptstore, PromptstoreError } from "../src/index.js";
import { countingFetch, DATABASES, sections, useFixture, waitFor } from "./support/harness.js";

const idle = (client: Promptstore) => client.status.stream === "live" && client.status.reading === 0;

describe.each(DATABASES)("a deleted prompt ($name)", (database) => {
  const fx = useFixture(database);

  test("delete() answers { id, deleted: true }; then reads, versions and a second delete are 404", async () => {
    const server = await fx.start();
    const client = fx.client({ baseUrl: server.url, mode: "none" });
    await client.create({ name: "Gone", sections: sections("a"), publish: true });
    expect(await client.delete("gone")).toEqual({ id: "gone", deleted: true });
    for (const attempt of [
      () => client.get("gone"),
      () => client.getV1("gone"),
      () => client.versions("gone"),
      () => client.delete("gone"),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PromptstoreError);
      expect((error as PromptstoreError).status).toBe(404);
    }
    expect((await client.list()).prompts).toEqual([]);
  });

  test("a watching client drops the prompt on prompt.deleted: its next get() asks the service and gets the 404", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    const v2 = await writer.save("agent", { sections: sections("v2") });
    const events: PromptEvent[] = [];
    const counter = countingFetch();
    const client = fx.client({
      baseUrl: server.url,
      ttlMs: 3_600_000,
      fetch: counter.fetch,
      onEvent: (e) => events.push(e),
      fallback: { agent: "unused: a 404 is an answer, not an outage" },
    });
    // Every kind of reference held: production, latest without the guard, and a pinned hash (kept for good).
    expect((await client.get("agent")).version).toBe(v1.version);
    expect((await client.get("agent", { version: "latest", guard: false })).version).toBe(v2.version);
    expect((await client.get("agent", { version: v1.version })).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    expect(client.status.cached).toBe(3);
    const reads = () => counter.calls.filter((c) => c.url.includes("/api/v2/prompts/agent")).length;
    const before = reads();
    await client.get("agent");
    expect(reads()).toBe(before);

    expect(await writer.delete("agent")).toEqual({ id: "agent", deleted: true });
    await waitFor(() => events.some((e) => e.type === "prompt.deleted"), 10_000, "the deletion event");
    expect(events.at(-1)).toMatchObject({
      type: "prompt.deleted",
      prompt_id: "agent",
      version: v1.version,
      production_version: null,
      latest_version: null,
    });
    expect(client.status.cached).toBe(0);

    for (const options of [{}, { version: "latest", guard: false }, { version: v1.version }]) {
      const error = await client.get("agent", options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(options)).toBeInstanceOf(PromptstoreError);
      expect((error as PromptstoreError).status).toBe(404);
    }
    expect(reads()).toBe(before + 3);
    expect(client.status.cached).toBe(0);

    // The id is free: a new prompt with it is served, with no history of the old one.
    const again = await writer.create({ name: "Agent", sections: sections("new") });
    await waitFor(() => events.some((e) => e.type === "prompt.created" && e.version === again.version));
    expect((await client.get("agent")).version).toBe(again.version);
    expect((await writer.versions("agent")).versions).toHaveLength(1);
  });

  test("once the prompt is dropped and the service cannot be reached, get() serves the fallback", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    const events: PromptEvent[] = [];
    const client = fx.client({
      baseUrl: proxy.url,
      retries: 0,
      timeoutMs: 2_000,
      onEvent: (e) => events.push(e),
      fallback: { agent: "You are a helpful agent." },
    });
    expect((await client.get("agent")).fallback).toBeUndefined();
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    await writer.delete("agent");
    await waitFor(() => events.some((e) => e.type === "prompt.deleted"), 10_000, "the deletion event");
    // Nothing held any more: with the service out of reach, the fallback instead of the deleted prompt.
    proxy.down = true;
    const served = await client.get("agent");
    expect(served).toMatchObject({ fallback: true, label: "fallback", prompt: "You are a helpful agent." });
  });

  test("the client's own delete() drops what it held, whatever the mode", async () => {
    const server = await fx.start();
    for (const mode of ["ttl", "watch"] as const) {
      const client = fx.client({ baseUrl: server.url, mode, ttlMs: 3_600_000 });
      const id = `own-${mode}`;
      await client.create({ name: id, sections: sections(mode) });
      await client.get(id);
      expect(client.status.cached).toBe(1);
      await client.delete(id);
      expect(client.status.cached).toBe(0);
      await expect(client.get(id)).rejects.toMatchObject({ status: 404 });
    }
  });
});
