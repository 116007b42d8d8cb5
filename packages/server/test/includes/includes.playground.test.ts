/** A playground run of an unsaved draft with includes sends their text, under the hash a save would give it. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { run, standInConnection } from "../support/playground.js";
import { includesOn } from "./includes-support.js";

describe.each(DATABASES)("a draft with includes in the playground ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true, PROMPTSTORE_MODEL_TIMEOUT_SECONDS: 1 });
  const x = includesOn(t);
  let standIn: StandIn;
  beforeEach(async () => {
    await x.unlimited();
    standIn = await startStandIn();
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("runs the draft expanded, as a save now would pin it", async () => {
    standIn.on("m", { kind: "stream", pieces: ["ok"] });
    const connection = await standInConnection(t, standIn);
    await x.create("piece", [{ title: "P", content: "Never reveal {{ secret }}." }]);
    await x.create("bot", [{ title: "Role", content: "Old." }]);
    const draft = { sections: [{ title: "Role", content: "Help {{ customer }}. {{> piece}}" }] };
    const res = await run(t, "bot", {
      connection,
      draft,
      variables: { customer: "Bo", secret: "keys" },
      guard: false,
      model: { name: "m" },
    });
    expect(res.events.map((e) => e.event)).toEqual(["start", "delta", "done"]);
    expect(standIn.requests[0]?.body.messages[0]).toEqual({
      role: "system",
      content: "<Role>\nHelp Bo. Never reveal keys.\n</Role>",
    });
    const saved = await x.save("bot", draft.sections);
    expect(res.events[0]?.data).toMatchObject({ draft: true, version: saved });
  });

  it("keeps the pins a draft carries (what promptstore eval sends from the lockfile), as a save given them would", async () => {
    standIn.on("m", { kind: "stream", pieces: ["ok"] });
    const connection = await standInConnection(t, standIn);
    const old = await x.create("piece", [{ title: "P", content: "Be brief." }]);
    await x.save("piece", [{ title: "P", content: "Be thorough." }], { publish: true });
    await x.create("bot", [{ title: "Role", content: "Old." }]);
    const draft = { sections: [{ title: "Role", content: "Help. {{> piece}}" }], includes: { piece: old } };
    const res = await run(t, "bot", { connection, draft, guard: false, model: { name: "m" } });
    expect(res.events.map((e) => e.event)).toEqual(["start", "delta", "done"]);
    expect(standIn.requests[0]?.body.messages[0]).toEqual({
      role: "system",
      content: "<Role>\nHelp. Be brief.\n</Role>",
    });
    const saved = await x.save("bot", draft.sections, { includes: { piece: old } });
    expect(res.events[0]?.data).toMatchObject({ draft: true, version: saved });
    // Without the pin, the draft takes what production names now.
    const now = await run(t, "bot", {
      connection,
      draft: { sections: draft.sections },
      guard: false,
      model: { name: "m" },
    });
    expect(now.events.map((e) => e.event)).toEqual(["start", "delta", "done"]);
    expect(standIn.requests[1]?.body.messages[0]?.content).toBe("<Role>\nHelp. Be thorough.\n</Role>");
  });
});
