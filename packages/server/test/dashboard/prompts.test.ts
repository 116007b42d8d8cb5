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
    expect(published.body).toEqual({ success: true, data: { id: "prompt-1", version: v2, published: true } });
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
          variables: ["team"],
        },
      ],
    });
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
});
