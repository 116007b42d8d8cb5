/**
 * `include.outdated` (docs/includes.md, docs/events.md): a move of what a pointer names makes the pins of it
 * in served versions of other prompts stale; each such version is one event, recorded with the move, queued
 * for the webhooks that want it. Versions nothing serves, pins of other pointers and of hashes get none.
 */
import { isPromptEvent } from "@promptstore/core/events";
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { includesOn } from "./includes-support.js";

describe.each(DATABASES)("include.outdated ($name)", (database) => {
  const t = useTestApp(database);
  const x = includesOn(t);
  beforeEach(() => x.unlimited());

  /** The events recorded after `after`, of one type. */
  const eventsAfter = async (after: number, type = "include.outdated") =>
    (await t.store.events.since(t.project.projectId, after, 1000)).filter(isPromptEvent).filter((e) => e.type === type);
  const lastId = () => t.store.events.lastId(t.project.projectId);

  it("is one event per served version whose pin a publish, a label's move or a save made stale", async () => {
    const v1 = await x.create("safety", [{ title: "R", content: "one" }]);
    await x.call("POST", "/api/v2/prompts/safety/publish", { version: v1, label: "staging" });
    const s1 = await x.create("support", [{ title: "S", content: "{{> safety}} {{> safety#R}}" }]);
    const f1 = await x.create("faq", [{ title: "F", content: `{{> safety@staging}} {{> safety@${v1.slice(0, 7)}}}` }]);
    const d1 = await x.create("draft", [{ title: "D", content: "{{> safety@latest}}" }], false);
    // A version nothing serves any more: history, no event.
    await x.create("old", [{ title: "O", content: "{{> safety}}" }]);
    await x.save("old", [{ title: "O", content: "none" }], { publish: true });
    const hook = await x.call("POST", "/api/v2/webhooks", {
      url: "https://hooks.example.com/includes",
      events: ["include.outdated"],
    });
    expect(hook.status).toBe(201);

    let mark = await lastId();
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    const published = (await eventsAfter(mark, "prompt.published"))[0]!;
    expect((await eventsAfter(mark)).map(({ id: _, ...e }) => e)).toEqual([
      {
        type: "include.outdated",
        prompt_id: "draft",
        version: d1,
        production_version: null,
        latest_version: d1,
        at: published.at,
        include: {
          prompt: "safety",
          pointer: "latest",
          references: ["safety@latest"],
          pinned: v1,
          current: v2,
          labels: ["latest"],
        },
      },
      {
        type: "include.outdated",
        prompt_id: "support",
        version: s1,
        production_version: s1,
        latest_version: s1,
        at: published.at,
        include: {
          prompt: "safety",
          pointer: "production",
          references: ["safety", "safety#R"],
          pinned: v1,
          current: v2,
          labels: ["production", "latest"],
        },
      },
    ]);

    mark = await lastId();
    await x.call("POST", "/api/v2/prompts/safety/publish", { version: v2, label: "staging" });
    expect((await eventsAfter(mark)).map((e) => [e.prompt_id, e.version, e.include])).toEqual([
      [
        "faq",
        f1,
        {
          prompt: "safety",
          pointer: "staging",
          references: ["safety@staging"],
          pinned: v1,
          current: v2,
          labels: ["production", "latest"],
        },
      ],
    ]);

    // Publishing what production serves moves nothing: no event.
    mark = await lastId();
    await x.call("POST", "/api/v2/prompts/safety/publish", { version: v2 });
    expect(await eventsAfter(mark)).toEqual([]);

    // Once support pins v2, a rollback to v1 makes that pin stale (and the pins of v1 current again).
    const s2 = (await x.call("POST", "/api/v2/prompts/support/update-includes", { publish: true })).body.data.version;
    mark = await lastId();
    await x.call("POST", "/api/v2/prompts/safety/publish", { version: v1 });
    expect(
      (await eventsAfter(mark)).map((e) => [e.prompt_id, e.version, e.include?.pinned, e.include?.current]),
    ).toEqual([["support", s2, v2, v1]]);

    // Every one of them was queued for the endpoint that wants them.
    const deliveries = (await x.call("GET", `/api/v2/webhooks/${hook.body.data.id}/deliveries`)).body.data.deliveries;
    expect(
      deliveries.map((d: { event_type: string; prompt_id: string }) => [d.event_type, d.prompt_id]).sort(),
    ).toEqual([
      ["include.outdated", "draft"],
      ["include.outdated", "faq"],
      ["include.outdated", "support"],
      ["include.outdated", "support"],
    ]);
  });
});
