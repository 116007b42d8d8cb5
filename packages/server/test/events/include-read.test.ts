import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { afterEach, describe, expect, it } from "vitest";
import { eventReader } from "../../src/http/reads/event-reads.js";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { changes, type EventStreamReader, openEventStream } from "../support/sse.js";

/** `GET /api/v2/events?include=read`: live events carry the production read they lead to (docs/events.md). */
describe.each(DATABASES)("events with include=read ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const open: EventStreamReader[] = [];

  const start = async (env: Record<string, unknown> = {}) => {
    t = await testApp(database, env);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  };
  const stream = async (query: string, headers: Record<string, string> = {}) => {
    const reader = await openEventStream(url, t.key, headers, query);
    open.push(reader);
    await reader.next((e) => e.event === "ready" || e.event === "reset");
    return reader;
  };
  const production = async (id: string) => (await t.request("GET", `/api/v2/prompts/${id}`)).body.data;

  afterEach(async () => {
    for (const reader of open.splice(0)) reader.close();
    await t?.close();
  });

  for (const cache of [true, false]) {
    it(`each live event carries exactly the read production then serves (read cache ${cache ? "on" : "off"})`, async () => {
      await start({ PROMPTSTORE_READ_CACHE: cache });
      const rich = await stream("?include=read");
      const plain = await stream("");

      await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
      const afterCreate = await production("p");
      const saved = await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(2) });
      const afterSave = await production("p");
      await t.request("POST", "/api/v2/prompts/p/publish", { body: { version: saved.body.data.version } });
      const afterPublish = await production("p");
      await rich.next((e) => e.event === "prompt.published");
      await plain.next((e) => e.event === "prompt.published");

      expect(changes(rich).map((e) => [e.type, e.read])).toEqual([
        ["prompt.created", afterCreate],
        ["prompt.version_saved", afterSave],
        ["prompt.published", afterPublish],
      ]);
      expect(afterPublish.label).toBe("production");
      expect(afterPublish.version).toBe(saved.body.data.version);
      expect(afterPublish.prompt.endsWith(`\n\n${DEFAULT_GUARD_TEXT}`)).toBe(true);
      // Without include=read the events are the plain ones webhooks deliver too.
      expect(changes(plain).map((e) => Object.keys(e).sort())).toEqual(
        Array(3).fill(["at", "id", "latest_version", "production_version", "prompt_id", "type", "version"]),
      );
    });
  }

  it("a deleted prompt's event carries no read, and nor does an event the prompt has already moved past", async () => {
    await start();
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "gone" }) });
    const rich = await stream("?include=read");
    await t.request("DELETE", "/api/v2/prompts/gone");
    await rich.next((e) => e.event === "prompt.deleted");
    expect(changes(rich).map((e) => [e.type, e.read])).toEqual([["prompt.deleted", undefined]]);
  });

  it("an event the prompt has moved past carries no read: the reader checks both pointers", async () => {
    await start();
    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    const v1 = created.body.data.version;
    await t.request("POST", "/api/v2/prompts/p/publish", { body: { version: v1 } });
    const caller = {
      projectId: t.project.projectId,
      projectName: "",
      orgId: t.project.orgId,
      plan: "free",
      actor: "test",
      access: "read" as const,
    };
    const readOf = eventReader(t.app.prompts, null);
    const event = {
      id: 1,
      type: "prompt.created" as const,
      prompt_id: "p",
      version: v1,
      latest_version: v1,
      at: new Date().toISOString(),
    };
    // Created unpublished: production now serves the same version, but the read's production_version moved.
    expect(await readOf(caller, { ...event, production_version: null })).toBe(undefined);
    expect(JSON.parse((await readOf(caller, { ...event, production_version: v1 })) as string)).toEqual(
      (await t.request("GET", "/api/v2/prompts/p")).body.data,
    );
  });

  it("replayed events carry no read: what a reconnecting client missed may no longer be served", async () => {
    await start();
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(2, { publish: true }) });
    const replay = await stream("?include=read", { "last-event-id": "0" });
    expect(changes(replay).map((e) => [e.type, e.read])).toEqual([
      ["prompt.created", undefined],
      ["prompt.version_saved", undefined],
      ["prompt.published", undefined],
    ]);
  });

  it("refuses an unknown include with 400 naming the field, before a stream is opened", async () => {
    await start();
    const res = await fetch(`${url}/api/v2/events?include=prompt`, { headers: { "x-api-key": t.key } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, error: "include: must be read" });
  });
});
