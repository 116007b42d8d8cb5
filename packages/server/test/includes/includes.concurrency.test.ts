/**
 * Saves of a piece and of the prompts that include it, at once (docs/includes.md, "Concurrent saves"): a
 * save pins an include in its transaction with the included prompt locked, so every pin is what the
 * pointer named when the save committed (in the events' commit order), a cycle raced from both ends is
 * refused once, and no race ends in a 500. On PostgreSQL the requests run at once on a pool; on SQLite the
 * one writer serializes them.
 */
import { isPromptEvent } from "@promptstore/core/events";
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { includesOn } from "./includes-support.js";

const ROUNDS = 8;
const DEPENDENTS = ["d1", "d2", "d3"];

describe.each(DATABASES)("concurrent saves of a piece and its dependents ($name)", (database) => {
  const t = useTestApp(database);
  const x = includesOn(t);
  beforeEach(() => x.unlimited());

  it("pins each dependent's save to what production served when it committed", async () => {
    await x.create("piece", [{ title: "P", content: "piece 0" }]);
    for (const id of DEPENDENTS) await x.create(id, [{ title: "D", content: `${id} 0 {{> piece}}` }]);
    for (let round = 1; round <= ROUNDS; round++) {
      const results = await Promise.all([
        x.call("PUT", "/api/v2/prompts/piece", {
          sections: [{ title: "P", content: `piece ${round}` }],
          publish: true,
        }),
        ...DEPENDENTS.map((id) =>
          x.call("PUT", `/api/v2/prompts/${id}`, { sections: [{ title: "D", content: `${id} ${round} {{> piece}}` }] }),
        ),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    }
    // Replay the events in commit order: each dependent's saved version pins the piece's production then.
    const events = (await t.store.events.since(t.project.projectId, 0, 10_000)).filter(isPromptEvent);
    let production = "";
    let checked = 0;
    for (const event of events) {
      if (event.prompt_id === "piece" && event.production_version !== null) production = event.production_version;
      if (DEPENDENTS.includes(event.prompt_id) && event.type === "prompt.version_saved") {
        const read = await x.read(event.prompt_id, `version=${event.version}&guard=false`);
        expect(read.includes[0].version, `${event.prompt_id} ${event.version}`).toBe(production);
        checked++;
      }
    }
    expect(checked).toBe(ROUNDS * DEPENDENTS.length);
  });

  it("refuses one of two saves that would include each other, whichever commits second", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await x.create(`a${round}`, [{ title: "A", content: "a" }]);
      await x.create(`b${round}`, [{ title: "B", content: "b" }]);
      const [a, b] = await Promise.all([
        x.call("PUT", `/api/v2/prompts/a${round}`, {
          sections: [{ title: "A", content: `{{> b${round}}}` }],
          publish: true,
        }),
        x.call("PUT", `/api/v2/prompts/b${round}`, {
          sections: [{ title: "B", content: `{{> a${round}}}` }],
          publish: true,
        }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 400]);
      const refused = a.status === 400 ? a : b;
      expect(refused.body.error).toMatch(/which would be a cycle$/);
    }
  });

  it("ends every crossing of saves among prompts that include one another in a pin or a cycle refused, never a 500", async () => {
    const ids = ["p0", "p1", "p2", "p3"];
    for (const id of ids) await x.create(id, [{ title: "T", content: id }]);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await Promise.all(
        ids.map((id, i) =>
          x.call("PUT", `/api/v2/prompts/${id}`, {
            sections: [{ title: "T", content: `${id} ${round} {{> ${ids[(i + 1) % ids.length]}}}` }],
            publish: true,
          }),
        ),
      );
      for (const r of results) expect([200, 400], JSON.stringify(r.body)).toContain(r.status);
      for (const r of results.filter((r) => r.status === 400)) expect(r.body.error).toMatch(/which would be a cycle$/);
    }
    // Whatever was taken, every prompt reads, its text finite.
    for (const id of ids) expect((await x.read(id)).prompt).toContain(id);
  });
});
