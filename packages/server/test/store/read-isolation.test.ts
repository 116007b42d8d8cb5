import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

class RolledBack extends Error {}

/**
 * The hot read runs on SQLite's connection directly when no transaction holds it (compiled-queries.ts).
 * A read made while another caller's transaction is open must never see that transaction's writes.
 */
describe.each(DATABASES)("reads and open transactions ($name)", (database) => {
  let t: TestApp;
  let caller: Caller;
  let first: string;
  let second: string;

  beforeEach(async () => {
    t = await testApp(database);
    caller = {
      projectId: t.project.projectId,
      projectName: "",
      orgId: t.project.orgId,
      plan: "free",
      actor: "test",
      access: "publish",
    };
    const created = await t.request("POST", "/api/v2/prompts", {
      body: { id: "greeter", name: "Greeter", sections: [{ title: "Role", content: "one" }], publish: true },
    });
    expect(created.status).toBe(201);
    first = created.body.data.version;
    const saved = await t.request("PUT", "/api/v2/prompts/greeter", {
      body: { sections: [{ title: "Role", content: "two" }] },
    });
    expect(saved.status).toBe(200);
    second = saved.body.data.version;
  });

  afterEach(async () => {
    await t.close();
  });

  it("a read made while another caller's transaction moves production serves what is committed", async () => {
    let during: Promise<{ version: string; prompt: string }> | undefined;
    await t.store.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .updateTable("prompts")
          .set({ production_version: second })
          .where("project_id", "=", caller.projectId)
          .where("id", "=", "greeter")
          .execute();
        during = t.app.prompts.read(caller, "greeter", { guard: false });
        // Give the read every chance to run while the transaction is open.
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new RolledBack();
      })
      .catch((error) => {
        if (!(error instanceof RolledBack)) throw error;
      });
    const read = await (during as NonNullable<typeof during>);
    expect([read.version, read.prompt]).toEqual([first, "<Role>\none\n</Role>"]);
    const after = await t.app.prompts.read(caller, "greeter", { guard: false });
    expect([after.version, after.prompt]).toEqual([first, "<Role>\none\n</Role>"]);
  });

  it("reads between transactions see each commit at once", async () => {
    for (const version of [second, first, second]) {
      const published = await t.request("POST", "/api/v2/prompts/greeter/publish", { body: { version } });
      expect(published.status).toBe(200);
      const read = await t.app.prompts.read(caller, "greeter", { guard: false });
      expect(read.version).toBe(version);
    }
  });
});
