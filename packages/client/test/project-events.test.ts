/**
 * A project's own change event (`label.requirement_changed`: docs/events.md) names no prompt. A client in mode
 * `watch` ignores it (it does not tell `onEvent`, touches nothing it holds, keeps its stream) and goes on
 * applying the prompt events that follow. The requirement is changed as an operator would, with
 * `promptstore label set`: another process, heard by the server on both databases.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { cli, cliJson } from "../../server/test/support/binary.js";
import { type EventStreamReader, openEventStream } from "../../server/test/support/sse.js";
import type { ProjectEvent, PromptEvent } from "../src/index.js";
import { countingFetch, DATABASES, sections, useFixture, waitFor } from "./support/harness.js";

const HASH = /^[0-9a-f]{64}$/;

describe.each(DATABASES)("a project's event in watch mode ($name)", (database) => {
  const fx = useFixture(database);
  const readers: EventStreamReader[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  test("label.requirement_changed is ignored; the publish after it is applied from the stream", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    const { project } = await writer.list();
    const connection = await cliJson(fx.databaseUrl, [
      "connection",
      "add",
      project.id,
      "--name",
      "Model",
      "--base-url",
      "https://models.example.com/v1",
      "--model",
      "m1",
      "--json",
    ]);
    const dataset = await writer.datasets.create({ name: "cases", cases: [{ vars: { company: "Acme" } }] });

    const events: PromptEvent[] = [];
    const errors: unknown[] = [];
    const counter = countingFetch();
    const client = fx.client({
      baseUrl: server.url,
      ttlMs: 3_600_000,
      fetch: counter.fetch,
      onEvent: (e) => events.push(e),
      onError: (e) => errors.push(e),
    });
    expect((await client.get("agent")).version).toBe(v1.version);
    await waitFor(() => client.status.stream === "live" && client.status.reading === 0, 10_000, "the stream");
    // The stream as any reader of it sees it, beside the client.
    const side = await openEventStream(server.url, fx.key);
    readers.push(side);
    await side.next((e) => e.event === "ready");

    const dir = mkdtempSync(join(tmpdir(), "promptstore-requirement-"));
    dirs.push(dir);
    const file = join(dir, "requirement.json");
    writeFileSync(
      file,
      JSON.stringify({
        dataset: dataset.id,
        checks: [{ type: "contains", value: "Acme" }],
        connection: connection.id,
        min_pass_rate: 1,
      }),
    );
    const set = await cli(fx.databaseUrl, ["label", "set", project.id, "staging", "--required-evaluation", file]);
    // (Its stderr may carry a note that the server acknowledged the change late: on a loaded machine, on PostgreSQL.)
    expect(set.code, set.stderr).toBe(0);
    const changed = await side.next((e) => e.event === "label.requirement_changed", 10_000);
    const event = JSON.parse(changed.data as string) as ProjectEvent;
    expect(event).toEqual({
      id: Number(changed.id),
      type: "label.requirement_changed",
      at: event.at,
      label: "staging",
      requirement: { hash: event.requirement.hash, rollback_allowed: true },
      previous: { hash: null, rollback_allowed: true },
    });
    expect(event.requirement.hash).toMatch(HASH);

    // The next prompt events, after it on the same stream: applied as ever.
    const reads = () => counter.calls.filter((c) => c.url.includes("/api/v2/prompts/agent")).length;
    const readsBefore = reads();
    const v2 = await writer.save("agent", { sections: sections("v2"), publish: true });
    await waitFor(() => events.some((e) => e.type === "prompt.published"), 10_000, "the publish event");
    expect(events.map((e) => [e.type, e.version])).toEqual([
      ["prompt.version_saved", v2.version],
      ["prompt.published", v2.version],
    ]);
    expect((await client.get("agent")).version).toBe(v2.version);
    // Served from the event's read: no request, one stream all along, no error.
    expect(reads()).toBe(readsBefore);
    expect(counter.calls.filter((c) => c.url.includes("/api/v2/events")).length).toBe(1);
    expect(client.status.stream).toBe("live");
    expect(errors).toEqual([]);
    // The side reader is a connection of its own: the same events reach it in the same order, perhaps later.
    await side.next((e) => e.event === "prompt.published", 10_000);
    const order = side.received.filter((e) => e.event !== undefined && e.event !== "ready").map((e) => e.event);
    expect(order).toEqual(["label.requirement_changed", "prompt.version_saved", "prompt.published"]);
  });
});
