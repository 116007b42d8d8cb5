import { describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("dashboard prompts, through the same service as REST ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_READ_CACHE: true });

  it("a dashboard publish is served by the REST read at once, though REST had it cached", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    const v1 = (await editor.call("POST", url, { body: { ...promptBody(1), publish: true } })).body.data.version;
    const saved = await editor.call("PUT", `${url}/prompt-1`, {
      body: { sections: [{ title: "Role", content: "Second" }] },
    });
    const v2 = saved.body.data.version;
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v1);
    expect((await t.request("GET", "/api/v1/prompts/prompt-1")).body.data.version).toBe(v1);
    const published = await editor.call("POST", `${url}/prompt-1/publish`, { body: { version: v2.slice(0, 7) } });
    expect(published.body).toEqual({
      success: true,
      data: { id: "prompt-1", version: v2, published: true, label: "production" },
    });
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v2);
    expect((await t.request("GET", "/api/v1/prompts/prompt-1")).body.data.version).toBe(v2);
    // Rolling back is publishing the older hash.
    await editor.call("POST", `${url}/prompt-1/publish`, { body: { version: v1 } });
    expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.version).toBe(v1);
  });

  it("a REST save appears in the dashboard's list and history, with who saved each version", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    const created = await editor.call("POST", url, { body: promptBody(1) });
    const v2 = (
      await t.request("PUT", "/api/v2/prompts/prompt-1", {
        body: { sections: [{ title: "Role", content: "From CI for {{ team }}" }], message: "from CI" },
      })
    ).body.data.version;
    const list = await editor.call("GET", url);
    expect(list.body.data).toEqual({
      project: { id: t.project.projectId, name: expect.any(String) },
      role: "editor",
      prompts: [
        {
          id: "prompt-1",
          name: "Prompt 1",
          description: "test prompt",
          production_version: null,
          latest_version: v2,
          created_at: created.body.data.created_at,
          updated_at: expect.any(String),
          labels: {},
          variables: ["team"],
          production_saved_at: null,
          latest_saved_at: expect.any(String),
        },
      ],
    });
    // The latest pointer's age is its version's: the REST save, not the dashboard's create.
    const versions = (await t.request("GET", "/api/v2/prompts/prompt-1/versions")).body.data.versions;
    expect(list.body.data.prompts[0].latest_saved_at).toBe(versions[0].created_at);
    await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: created.body.data.version } });
    const published = (await editor.call("GET", url)).body.data.prompts[0];
    expect(published.production_saved_at).toBe(created.body.data.created_at);
    const keyPrefix = t.key.slice(0, 12);
    const history = await editor.call("GET", `${url}/prompt-1/versions`);
    expect(history.body.data.versions.map((v: any) => [v.version, v.message, v.saved_by])).toEqual([
      [v2, "from CI", `key:${keyPrefix}`],
      [created.body.data.version, null, `user:${editor.email}`],
    ]);
    // The REST history says the same.
    const rest = await t.request("GET", "/api/v2/prompts/prompt-1/versions");
    expect(rest.body.data.versions.map((v: any) => v.saved_by)).toEqual([`key:${keyPrefix}`, `user:${editor.email}`]);
  });

  it("saving identical content makes no version and names the existing one it matches", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    const first = (await editor.call("POST", url, { body: promptBody(1) })).body.data.version;
    await editor.call("PUT", `${url}/prompt-1`, { body: { sections: [{ title: "Role", content: "Other" }] } });
    const again = await editor.call("PUT", `${url}/prompt-1`, { body: { sections: promptBody(1).sections } });
    expect(again.body).toEqual({
      success: true,
      data: { id: "prompt-1", version: first, created: false, published: false },
    });
    expect((await editor.call("GET", `${url}/prompt-1/versions`)).body.data.versions).toHaveLength(2);
  });

  it("base_version refuses a save that would silently replace someone else's (409 naming latest)", async () => {
    const alice = await member(t, "editor");
    const bob = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    const base = (await alice.call("POST", url, { body: promptBody(1) })).body.data.version;
    const edit = (content: string) => ({ sections: [{ title: "Role", content }], base_version: base });
    const first = await alice.call("PUT", `${url}/prompt-1`, { body: edit("Alice's edit") });
    expect(first.body.data.created).toBe(true);
    const second = await bob.call("PUT", `${url}/prompt-1`, { body: edit("Bob's edit") });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({
      success: false,
      error: `base_version: the prompt changed since this edit began; latest is now ${first.body.data.version}`,
    });
    const latest = await t.request("GET", "/api/v2/prompts/prompt-1?version=latest&guard=false");
    expect(latest.body.data.sections.map((s: { content: string }) => s.content)).toEqual(["Alice's edit"]);
    // Rebased on the new latest, Bob's save goes through.
    const rebased = await bob.call("PUT", `${url}/prompt-1`, {
      body: { ...edit("Bob's edit"), base_version: first.body.data.version },
    });
    expect(rebased.body.data.created).toBe(true);
  });

  it("of concurrent saves from the same base_version, exactly one wins", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    const base = (await editor.call("POST", url, { body: promptBody(1) })).body.data.version;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        editor.call("PUT", `${url}/prompt-1`, {
          body: { sections: [{ title: "Role", content: `Edit ${n}` }], base_version: base },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect((await editor.call("GET", `${url}/prompt-1/versions`)).body.data.versions).toHaveLength(2);
  });

  it("reads a version with or without the guard, as REST does", async () => {
    const viewer = await member(t, "viewer");
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    for (const query of ["", "?guard=false", "?version=latest&guard=true"]) {
      const dashboard = await viewer.call("GET", `${promptsUrl(t.project.projectId)}/prompt-1${query}`);
      const rest = await t.request("GET", `/api/v2/prompts/prompt-1${query}`);
      expect(dashboard.body, query).toEqual(rest.body);
    }
  });

  it("rejects bad input naming the field, with the REST schemas' messages", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    const bad = await editor.call("POST", url, {
      body: {
        name: "X",
        sections: [
          { title: "Ok", content: "" },
          { title: " ", content: "x" },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, error: "sections[1].title: must not be blank" });
    const version = await editor.call("GET", `${url}/prompt-1?version=zzz`);
    expect(version.status).toBe(400);
    expect(version.body.error).toMatch(/^version: must be production, latest/);
    const missing = await editor.call("GET", `${url}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: "prompt nope not found" });
  });

  it("the plan's prompt limit holds in the dashboard too", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    for (let n = 0; n < 5; n++) expect((await editor.call("POST", url, { body: promptBody(n) })).status).toBe(201);
    const sixth = await editor.call("POST", url, { body: promptBody(5) });
    expect(sixth.status).toBe(403);
    expect(sixth.body.error).toBe("plan limit reached: the free plan allows 5 prompts per project");
  });

  it("an editor deletes a prompt: REST reads it had cached are 404 at once, the list drops it, the slot is free", async () => {
    const editor = await member(t, "editor");
    const url = promptsUrl(t.project.projectId);
    for (let n = 0; n < 5; n++) expect((await editor.call("POST", url, { body: promptBody(n) })).status).toBe(201);
    expect((await t.request("GET", "/api/v2/prompts/prompt-2")).status).toBe(200);
    expect((await t.request("GET", "/api/v1/prompts/prompt-2")).status).toBe(200);

    // A mutation like any other: without the session's CSRF token it is refused and nothing changes.
    expect((await editor.call("DELETE", `${url}/prompt-2`, { csrf: null })).status).toBe(403);
    expect((await t.request("GET", "/api/v2/prompts/prompt-2")).status).toBe(200);

    const deleted = await editor.call("DELETE", `${url}/prompt-2`);
    expect(deleted.body).toEqual({ success: true, data: { id: "prompt-2", deleted: true } });
    expect((await t.request("GET", "/api/v2/prompts/prompt-2")).status).toBe(404);
    expect((await t.request("GET", "/api/v1/prompts/prompt-2")).status).toBe(404);
    expect((await editor.call("GET", `${url}/prompt-2`)).status).toBe(404);
    expect((await editor.call("GET", `${url}/prompt-2/versions`)).status).toBe(404);
    const listed = (await editor.call("GET", url)).body.data.prompts.map((p: { id: string }) => p.id);
    expect(listed).toEqual(["prompt-0", "prompt-1", "prompt-3", "prompt-4"]);
    const again = await editor.call("DELETE", `${url}/prompt-2`);
    expect(again.body).toEqual({ success: false, error: "prompt prompt-2 not found" });
    expect(again.status).toBe(404);
    expect((await editor.call("POST", url, { body: promptBody(5) })).status).toBe(201);
  });
});
