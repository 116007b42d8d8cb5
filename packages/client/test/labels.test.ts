/**
 * docs/releases.md: a label read is held like any other and never served stale: a label moved, removed or
 * rolled out is read again on the next get, through the change stream, in watch mode.
 */
import { describe, expect, test } from "vitest";
import type { Promptstore } from "../src/index.js";
import { countingFetch, DATABASES, sections, useFixture, waitFor } from "./support/harness.js";

const idle = (client: Promptstore) => client.status.stream === "live" && client.status.reading === 0;

describe.each(DATABASES)("labels in the client ($name)", (database) => {
  const fx = useFixture(database);

  test("a staging read follows the label's moves and is gone once the label is removed", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    await writer.publish("agent", v1.version, { label: "staging" });
    const v2 = await writer.save("agent", { sections: sections("v2") });
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000 });
    expect((await client.get("agent", { version: "staging" })).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    await writer.publish("agent", v2.version, { label: "staging" });
    await waitFor(
      async () => (await client.get("agent", { version: "staging" })).version === v2.version,
      10_000,
      "the label's move to reach the client",
    );
    const read = await client.get("agent", { version: "staging" });
    expect(read.label).toBe("staging");
    expect(read.labels).toEqual({ production: v1.version, staging: v2.version });

    await writer.removeLabel("agent", "staging");
    await waitFor(
      async () => (await client.get("agent", { version: "staging" }).catch((error: Error) => error)) instanceof Error,
      10_000,
      "the removal to reach the client",
    );
  });

  test("a label's move reaches the client with its read: served from memory without a request", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    await writer.publish("agent", v1.version, { label: "staging" });
    const v2 = await writer.save("agent", { sections: sections("v2") });
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000, fetch: counter.fetch });
    expect((await client.get("agent", { version: "staging" })).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    const reads = () => counter.calls.filter((c) => c.url.includes("/api/v2/prompts/agent")).length;
    const before = reads();
    await writer.publish("agent", v2.version, { label: "staging" });
    await waitFor(
      async () => (await client.get("agent", { version: "staging" })).version === v2.version,
      10_000,
      "the label's move to reach the client",
    );
    expect(reads()).toBe(before);
  });
});
