import { describe, expect, it } from "vitest";
import { deletedPrompt, failureEnvelope, successEnvelope } from "../../src/http/openapi/response-schemas.js";
import { promptBody, type Response, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const expectNotFound = (res: Response, what: string) => {
  expect(res.status, what).toBe(404);
  expect(failureEnvelope.parse(res.body).error, what).toMatch(/not found|no version of prompt/);
};

const TOOL = {
  type: "function",
  function: { name: "lookup", description: "Looks up an order", parameters: { type: "object", properties: {} } },
};

describe.each(DATABASES)("DELETE /api/v2/prompts/:id ($name)", (database) => {
  const t = useTestApp(database);
  const db = () => t.store.db;

  /** Every row any table holds for one prompt of one project. */
  const rowsOf = async (projectId: string, promptId: string) => {
    const count = async (table: "versions" | "version_sections" | "version_tools") =>
      (
        await db()
          .selectFrom(table)
          .select("hash")
          .where("project_id", "=", projectId)
          .where("prompt_id", "=", promptId)
          .execute()
      ).length;
    const prompt = await db()
      .selectFrom("prompts")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", promptId)
      .executeTakeFirst();
    return {
      prompt: prompt !== undefined,
      versions: await count("versions"),
      version_sections: await count("version_sections"),
      version_tools: await count("version_tools"),
    };
  };
  const promptCount = async (projectId: string) =>
    Number(
      (await db().selectFrom("projects").select("prompt_count").where("id", "=", projectId).executeTakeFirstOrThrow())
        .prompt_count,
    );
  const eventsOf = (projectId: string) =>
    db()
      .selectFrom("events")
      .select(["type", "prompt_id", "version", "production_version", "latest_version"])
      .where("project_id", "=", projectId)
      .orderBy("id")
      .execute();

  it("answers { id, deleted: true } and removes the prompt with every version, section and tool row", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { tools: [TOOL] }) })).body.data
      .version;
    await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections, tools: [TOOL] } });
    expect(await rowsOf(t.project.projectId, "prompt-1")).toEqual({
      prompt: true,
      versions: 2,
      version_sections: 4,
      version_tools: 2,
    });
    expect(v1).toMatch(/^[0-9a-f]{64}$/);

    const res = await t.request("DELETE", "/api/v2/prompts/prompt-1");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { id: "prompt-1", deleted: true } });
    successEnvelope(deletedPrompt).parse(res.body);
    expect(await rowsOf(t.project.projectId, "prompt-1")).toEqual({
      prompt: false,
      versions: 0,
      version_sections: 0,
      version_tools: 0,
    });
    expect((await t.request("GET", "/api/v2/prompts")).body.data.prompts).toEqual([]);
  });

  it("afterwards every read (v2, v1, any version, hash or prefix), save, publish and history is 404, cached reads included", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
      .version;
    const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } })).body
      .data.version;
    const reads = [
      "/api/v2/prompts/prompt-1",
      "/api/v2/prompts/prompt-1?guard=false",
      "/api/v2/prompts/prompt-1?version=production",
      "/api/v2/prompts/prompt-1?version=latest",
      "/api/v2/prompts/prompt-1?version=latest&guard=false",
      `/api/v2/prompts/prompt-1?version=${v1}`,
      `/api/v2/prompts/prompt-1?version=${v2}&guard=false`,
      `/api/v2/prompts/prompt-1?version=${v1.slice(0, 7)}`,
      `/api/v2/prompts/prompt-1?version=${v2.slice(0, 12)}`,
      "/api/v1/prompts/prompt-1",
      "/api/v1/prompts/prompt-1?version=latest",
    ];
    // Each read twice first: the second is served from the read cache, which the deletion must empty.
    for (const url of reads) {
      expect((await t.request("GET", url)).status, url).toBe(200);
      expect((await t.request("GET", url)).status, url).toBe(200);
    }
    const etag = (await t.request("GET", `/api/v2/prompts/prompt-1?version=${v1}`)).headers.etag as string;

    expect((await t.request("DELETE", "/api/v2/prompts/prompt-1")).status).toBe(200);

    for (const url of reads) expectNotFound(await t.request("GET", url), url);
    // A client that kept the pinned read is not told "not modified" about a version that no longer exists.
    expectNotFound(
      await t.request("GET", `/api/v2/prompts/prompt-1?version=${v1}`, { headers: { "if-none-match": etag } }),
      "If-None-Match",
    );
    expectNotFound(await t.request("GET", "/api/v2/prompts/prompt-1/versions"), "versions");
    expectNotFound(
      await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(3).sections } }),
      "save",
    );
    expectNotFound(await t.request("POST", "/api/v2/prompts/prompt-1/publish"), "publish");
    expectNotFound(
      await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: v1 } }),
      "publish v1",
    );
    expectNotFound(await t.request("DELETE", "/api/v2/prompts/prompt-1"), "delete again");
    // The failed save made nothing.
    expect(await rowsOf(t.project.projectId, "prompt-1")).toMatchObject({ prompt: false, versions: 0 });
  });

  it("frees its place in the plan's prompt count: a Free project with 5 prompts deletes one and creates a sixth", async () => {
    for (let n = 1; n <= 5; n++)
      expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(n) })).status).toBe(201);
    expect(await promptCount(t.project.projectId)).toBe(5);
    const refused = await t.request("POST", "/api/v2/prompts", { body: promptBody(6) });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("plan limit reached: the free plan allows 5 prompts per project");

    expect((await t.request("DELETE", "/api/v2/prompts/prompt-3")).status).toBe(200);
    expect(await promptCount(t.project.projectId)).toBe(4);
    const sixth = await t.request("POST", "/api/v2/prompts", { body: promptBody(6) });
    expect(sixth.status).toBe(201);
    expect(await promptCount(t.project.projectId)).toBe(5);
    // And the limit holds again.
    expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(7) })).status).toBe(403);
    const ids = (await t.request("GET", "/api/v2/prompts")).body.data.prompts.map((p: { id: string }) => p.id);
    expect(ids).toEqual(["prompt-1", "prompt-2", "prompt-4", "prompt-5", "prompt-6"]);
  });

  it("frees the id: a new prompt with it starts with no history", async () => {
    const old = (await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "bot", publish: true } }))
      .body.data.version;
    await t.request("PUT", "/api/v2/prompts/bot", { body: { sections: promptBody(2).sections } });
    await t.request("GET", "/api/v2/prompts/bot");
    expect((await t.request("DELETE", "/api/v2/prompts/bot")).status).toBe(200);

    // Explicitly, and by derivation from the name: "Bot" is "bot" again, not "bot-2".
    const again = await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(3), name: "Bot" } });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe("bot");
    const history = (await t.request("GET", "/api/v2/prompts/bot/versions")).body.data;
    expect(history.versions).toHaveLength(1);
    expect(history).toMatchObject({ production_version: null, latest_version: again.body.data.version });
    const read = (await t.request("GET", "/api/v2/prompts/bot")).body.data;
    expect(read).toMatchObject({ version: again.body.data.version, label: "latest", production_version: null });
    expect(read.prompt).toContain("number 3");
    expectNotFound(await t.request("GET", `/api/v2/prompts/bot?version=${old}`), "the old version");
    expect(await rowsOf(t.project.projectId, "bot")).toEqual({
      prompt: true,
      versions: 1,
      version_sections: 2,
      version_tools: 0,
    });
  });

  it("leaves another project's prompt with the same id untouched, and cannot delete it (404, nothing changed)", async () => {
    const other = await t.newProject();
    await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "same" } });
    const theirs = await t.request("POST", "/api/v2/prompts", {
      key: other.key,
      body: { ...promptBody(2), id: "same", publish: true },
    });
    const theirRead = (await t.request("GET", "/api/v2/prompts/same", { key: other.key })).body;
    const before = {
      rows: await rowsOf(other.projectId, "same"),
      count: await promptCount(other.projectId),
      events: await eventsOf(other.projectId),
    };

    expect((await t.request("DELETE", "/api/v2/prompts/same")).status).toBe(200);
    expect((await t.request("GET", "/api/v2/prompts/same", { key: other.key })).body).toEqual(theirRead);
    expect(await rowsOf(other.projectId, "same")).toEqual(before.rows);
    expect(theirRead.data.version).toBe(theirs.body.data.version);

    // Their prompt "only" exists in their project: from this one it is unknown.
    await t.request("POST", "/api/v2/prompts", { key: other.key, body: { ...promptBody(3), id: "only-theirs" } });
    expectNotFound(await t.request("DELETE", "/api/v2/prompts/only-theirs"), "foreign");
    expect((await t.request("GET", "/api/v2/prompts/only-theirs", { key: other.key })).status).toBe(200);
    expect(await promptCount(other.projectId)).toBe(before.count + 1);
    expect((await eventsOf(other.projectId)).slice(0, before.events.length)).toEqual(before.events);
  });

  it("an unknown id is 404 and changes nothing: no rows, no count, no event", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const snapshot = async () => ({
      list: (await t.request("GET", "/api/v2/prompts")).body.data,
      rows: await rowsOf(t.project.projectId, "prompt-1"),
      count: await promptCount(t.project.projectId),
      events: await eventsOf(t.project.projectId),
    });
    const before = await snapshot();
    expect(before.count).toBe(1);
    for (const id of ["nothing", "prompt-", "PROMPT-1", "x".repeat(300)]) {
      expectNotFound(await t.request("DELETE", `/api/v2/prompts/${id}`), id);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("needs the project's key: 401 without one, and the prompt stays", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    expect((await t.request("DELETE", "/api/v2/prompts/prompt-1", { key: null })).status).toBe(401);
    expect((await t.request("DELETE", "/api/v2/prompts/prompt-1", { key: "ps_wrong" })).status).toBe(401);
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).status).toBe(200);
  });

  it("records prompt.deleted in the same transaction: version is production's, else latest; both pointers null; history kept", async () => {
    const published = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
      .version;
    await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { sections: promptBody(2).sections } });
    const unpublished = (await t.request("POST", "/api/v2/prompts", { body: promptBody(3) })).body.data.version;
    const newer = (await t.request("PUT", "/api/v2/prompts/prompt-3", { body: { sections: promptBody(4).sections } }))
      .body.data.version;
    expect(newer).not.toBe(unpublished);

    await t.request("DELETE", "/api/v2/prompts/prompt-1");
    await t.request("DELETE", "/api/v2/prompts/prompt-3");
    const events = await eventsOf(t.project.projectId);
    expect(events.map((e) => `${e.type} ${e.prompt_id}`)).toEqual([
      "prompt.created prompt-1",
      "prompt.version_saved prompt-1",
      "prompt.created prompt-3",
      "prompt.version_saved prompt-3",
      "prompt.deleted prompt-1",
      "prompt.deleted prompt-3",
    ]);
    expect(events[4]).toEqual({
      type: "prompt.deleted",
      prompt_id: "prompt-1",
      version: published,
      production_version: null,
      latest_version: null,
    });
    expect(events[5]).toMatchObject({ version: newer, production_version: null, latest_version: null });
  });

  it("queues prompt.deleted for the project's webhooks and keeps the prompt's earlier deliveries", async () => {
    const hook = await t.request("POST", "/api/v2/webhooks", {
      body: { url: "https://hooks.example.com/in", events: ["prompt.created", "prompt.deleted"] },
    });
    expect(hook.status).toBe(201);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    await t.request("DELETE", "/api/v2/prompts/prompt-1");
    const deliveries = await db()
      .selectFrom("webhook_deliveries")
      .select(["event_type", "prompt_id", "payload"])
      .where("project_id", "=", t.project.projectId)
      .orderBy("id")
      .execute();
    expect(deliveries.map((d) => d.event_type)).toEqual(["prompt.created", "prompt.deleted"]);
    const payload = JSON.parse(deliveries[1]!.payload);
    expect(JSON.stringify(payload)).toContain('"prompt.deleted"');
    expect(JSON.stringify(payload)).toContain('"latest_version":null');
  });

  it("concurrent deletes and saves leave either nothing or a whole prompt, never a half (20 rounds)", async () => {
    const { projectId } = await t.newProject({ plan: "unlimited" });
    const key = (await t.app.tenants.createApiKey(projectId)).key;
    const outcomes = new Set<string>();
    for (let round = 0; round < 20; round++) {
      const id = `race-${round % 3}`;
      const existing = await t.request("GET", `/api/v2/prompts/${id}`, { key });
      if (existing.status === 404) {
        expect((await t.request("POST", "/api/v2/prompts", { key, body: { ...promptBody(round), id } })).status).toBe(
          201,
        );
      }
      const [deleted, saved] = await Promise.all([
        t.request("DELETE", `/api/v2/prompts/${id}`, { key }),
        t.request("PUT", `/api/v2/prompts/${id}`, {
          key,
          body: { sections: promptBody(1000 + round).sections, publish: round % 2 === 0 },
        }),
      ]);
      // Whatever the order, no 500: the save found the prompt (200) or it was already gone (404).
      expect(deleted.status, `round ${round}`).toBe(200);
      expect([200, 404], `round ${round}`).toContain(saved.status);
      outcomes.add(`delete ${deleted.status}, save ${saved.status}`);

      const read = await t.request("GET", `/api/v2/prompts/${id}`, { key });
      const rows = await rowsOf(projectId, id);
      if (read.status === 404) {
        expect(rows, `round ${round}`).toEqual({ prompt: false, versions: 0, version_sections: 0, version_tools: 0 });
      } else {
        // Not reachable while delete always wins here, but it is the other whole outcome.
        const prompt = await db()
          .selectFrom("prompts")
          .selectAll()
          .where("project_id", "=", projectId)
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
        const hashes = (
          await db()
            .selectFrom("versions")
            .select("hash")
            .where("project_id", "=", projectId)
            .where("prompt_id", "=", id)
            .execute()
        ).map((v) => v.hash);
        expect(hashes).toContain(prompt.latest_version);
        if (prompt.production_version !== null) expect(hashes).toContain(prompt.production_version);
        expect(rows.version_sections).toBe(2 * hashes.length);
      }
      // The plan's count is the number of prompts, whatever interleaving happened.
      const listed = (await t.request("GET", "/api/v2/prompts", { key })).body.data.prompts.length;
      expect(await promptCount(projectId), `round ${round}`).toBe(listed);
    }
    expect(outcomes.size).toBeGreaterThanOrEqual(1);
  });

  it("concurrent deletes of one prompt: one 200, the others 404, the count given back once", async () => {
    for (let n = 1; n <= 3; n++) await t.request("POST", "/api/v2/prompts", { body: promptBody(n) });
    const results = await Promise.all(Array.from({ length: 8 }, () => t.request("DELETE", "/api/v2/prompts/prompt-2")));
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404, 404, 404, 404, 404, 404]);
    expect(await promptCount(t.project.projectId)).toBe(2);
    expect((await eventsOf(t.project.projectId)).filter((e) => e.type === "prompt.deleted")).toHaveLength(1);
  });

  it("a delete racing a create that reuses the id, and a publish: no 500, the count matches the prompts", async () => {
    const { projectId } = await t.newProject({ plan: "unlimited" });
    const key = (await t.app.tenants.createApiKey(projectId)).key;
    for (let round = 0; round < 10; round++) {
      await t.request("POST", "/api/v2/prompts", { key, body: { ...promptBody(round), id: "contested" } });
      const results = await Promise.all([
        t.request("DELETE", "/api/v2/prompts/contested", { key }),
        t.request("POST", "/api/v2/prompts", { key, body: { ...promptBody(100 + round), id: "contested" } }),
        t.request("POST", "/api/v2/prompts/contested/publish", { key }),
      ]);
      for (const res of results) expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
      const listed = (await t.request("GET", "/api/v2/prompts", { key })).body.data.prompts.length;
      expect(await promptCount(projectId)).toBe(listed);
      const rows = await rowsOf(projectId, "contested");
      if (!rows.prompt) expect(rows).toEqual({ prompt: false, versions: 0, version_sections: 0, version_tools: 0 });
      else expect(rows.versions).toBeGreaterThanOrEqual(1);
      // The published event never follows the deletion of what it published.
      const events = await eventsOf(projectId);
      const last = events[events.length - 1]!;
      if (!rows.prompt) expect(last.type).toBe("prompt.deleted");
      if (rows.prompt) await t.request("DELETE", "/api/v2/prompts/contested", { key });
    }
  });
});
