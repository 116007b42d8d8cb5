import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { changes, type EventStreamReader, openEventStream } from "../support/sse.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");

describe.each(DATABASES)("prompt.deleted on the events stream ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const readers: EventStreamReader[] = [];
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    await t.close();
  });

  it("streams prompt.deleted live and in a replay, with null pointers and the version production served", async () => {
    const reader = await openEventStream(url, t.key);
    readers.push(reader);
    await reader.next((e) => e.event === "ready");
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
      .version;
    await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } });
    expect((await t.request("DELETE", "/api/v2/prompts/prompt-1")).status).toBe(200);

    const deleted = await reader.next((e) => e.event === "prompt.deleted");
    const data = JSON.parse(deleted.data as string);
    expect(data).toEqual({
      id: Number(deleted.id),
      type: "prompt.deleted",
      prompt_id: "prompt-1",
      version: v1,
      production_version: null,
      latest_version: null,
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(changes(reader).map((e) => e.type)).toEqual(["prompt.created", "prompt.version_saved", "prompt.deleted"]);

    // A client that reconnects after the save is replayed the deletion.
    const saved = changes(reader)[1];
    const replay = await openEventStream(url, t.key, { "last-event-id": String(saved.id) });
    readers.push(replay);
    await replay.next((e) => e.event === "ready");
    expect(changes(replay)).toEqual([data]);
  });
});

/** Two instances of the app on one PostgreSQL database, each with its own pool, cache and LISTEN connection. */
describe.runIf(postgres)("a deletion across two instances ('postgres')", () => {
  const two = useTwoInstances(postgres!);
  const { apps, urls, readers } = two;
  const call = (instance: number, method: string, path: string, body?: unknown) =>
    two.call(instance, method, path, body);

  it("every read B had cached (v1, v2, each version and guard) is a 404 on B right after A's delete answers", async () => {
    const v1 = (await call(0, "POST", "/api/v2/prompts", promptBody(1, { id: "bot", publish: true }))).body.data
      .version;
    const v2 = (await call(0, "PUT", "/api/v2/prompts/bot", { sections: promptBody(2).sections })).body.data.version;
    const reads = [
      "/api/v2/prompts/bot",
      "/api/v2/prompts/bot?guard=false",
      "/api/v2/prompts/bot?version=latest",
      `/api/v2/prompts/bot?version=${v1}`,
      `/api/v2/prompts/bot?version=${v2.slice(0, 9)}&guard=false`,
      "/api/v1/prompts/bot",
    ];
    for (let round = 0; round < 5; round++) {
      if (round > 0) {
        expect((await call(0, "POST", "/api/v2/prompts", promptBody(1, { id: "bot", publish: true }))).status).toBe(
          201,
        );
        await call(0, "PUT", "/api/v2/prompts/bot", { sections: promptBody(2).sections });
      }
      // Warm B's cache (twice: the second read is a hit), then delete on A and read B at once.
      for (const path of reads) {
        expect((await call(1, "GET", path)).status, path).toBe(200);
        expect((await call(1, "GET", path)).status, path).toBe(200);
      }
      const readsBefore = apps[1]!.prompts.reads;
      expect((await call(0, "DELETE", "/api/v2/prompts/bot")).status).toBe(200);
      for (const path of reads) expect((await call(1, "GET", path)).status, `round ${round} ${path}`).toBe(404);
      // B asked its database: nothing was served from what it held.
      expect(apps[1]!.prompts.reads - readsBefore).toBe(reads.length);
    }
  });

  it("a stream on B sees the deletion made on A", async () => {
    const reader = await openEventStream(urls[1] as string, two.key);
    readers.push(reader);
    await reader.next((e) => e.event === "ready");
    await call(0, "POST", "/api/v2/prompts", promptBody(1, { id: "bot" }));
    await call(0, "DELETE", "/api/v2/prompts/bot");
    const deleted = await reader.next((e) => e.event === "prompt.deleted");
    expect(JSON.parse(deleted.data as string)).toMatchObject({
      prompt_id: "bot",
      production_version: null,
      latest_version: null,
    });
  });
});
