/**
 * docs/releases.md, "Labels": a label is a movable pointer per prompt; it is moved with the publish
 * endpoint, read with `version=<label>`, listed in every read, list item and history row, and removed.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { openEventStream } from "../support/sse.js";

describe.each(DATABASES)("labels ($name)", (database) => {
  const t = useTestApp(database);
  let v1 = "";
  let v2 = "";
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
  });

  it("a publish with a label moves that label alone; a read by it serves it and names it", async () => {
    const moved = await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v2, label: "staging" } });
    expect(moved).toMatchObject({
      status: 200,
      body: { success: true, data: { id: "bot", version: v2, published: true, label: "staging" } },
    });
    expect(moved.body.data).toEqual({ id: "bot", version: v2, published: true, label: "staging" });

    const staging = await t.request("GET", "/api/v2/prompts/bot?version=staging&guard=false");
    expect(staging.status).toBe(200);
    expect(staging.body.data.version).toBe(v2);
    expect(staging.body.data.label).toBe("staging");
    expect(staging.body.data.prompt).toBe("<A>\ntwo\n</A>");
    expect(staging.body.data.labels).toEqual({ production: v1, staging: v2 });

    // Production did not move.
    const production = await t.request("GET", "/api/v2/prompts/bot");
    expect(production.body.data.version).toBe(v1);
    expect(production.body.data.label).toBe("production");
    expect(production.body.data.labels).toEqual({ production: v1, staging: v2 });
  });

  it("labels show on list items and on each version of the history", async () => {
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v2, label: "staging" } });
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v1, label: "eu-canary" } });
    const list = await t.request("GET", "/api/v2/prompts");
    expect(list.body.data.prompts[0].labels).toEqual({ production: v1, "eu-canary": v1, staging: v2 });
    // Paged lists too.
    const page = await t.request("GET", "/api/v2/prompts?limit=1");
    expect(page.body.data.prompts[0].labels).toEqual({ production: v1, "eu-canary": v1, staging: v2 });

    const history = await t.request("GET", "/api/v2/prompts/bot/versions");
    expect(history.body.data.labels).toEqual({ production: v1, "eu-canary": v1, staging: v2 });
    const byVersion = Object.fromEntries(
      history.body.data.versions.map((v: { version: string; labels: unknown }) => [v.version, v.labels]),
    );
    expect(byVersion).toEqual({ [v1]: { production: v1, "eu-canary": v1 }, [v2]: { staging: v2 } });
  });

  it("a prompt with no labels reads as before, with production alone (or nothing) in labels", async () => {
    const read = await t.request("GET", "/api/v2/prompts/bot");
    expect(read.body.data.labels).toEqual({ production: v1 });
    await t.request("POST", "/api/v2/prompts", { body: { id: "draft", name: "Draft", markdown: "# A\nx" } });
    const draft = await t.request("GET", "/api/v2/prompts/draft");
    expect(draft.body.data.label).toBe("latest");
    expect(draft.body.data.labels).toEqual({});
    // v1's frozen shape gains nothing.
    const v1Read = await t.request("GET", "/api/v1/prompts/bot");
    expect(Object.keys(v1Read.body.data)).toEqual([
      "id",
      "prompt",
      "sections",
      "tools",
      "version",
      "created_at",
      "updated_at",
      "name",
      "description",
      "variables",
      "label",
      "production_version",
    ]);
  });

  it("a label no prompt of the project uses is the 400 it always was; one this prompt lacks is a 404", async () => {
    const unknown = await t.request("GET", "/api/v2/prompts/bot?version=staging");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe(
      "version: must be production, latest, a label this project uses, or 7-64 lowercase hex characters of a version hash",
    );
    // Before the prompt is looked up, as before labels.
    expect((await t.request("GET", "/api/v2/prompts/nope?version=staging")).status).toBe(400);
    await t.request("POST", "/api/v2/prompts", { body: { id: "other", name: "Other", markdown: "# A\nz" } });
    await t.request("POST", "/api/v2/prompts/other/publish", { body: { label: "staging" } });
    const lacking = await t.request("GET", "/api/v2/prompts/bot?version=staging");
    expect(lacking.status).toBe(404);
    expect(lacking.body.error).toBe("label: prompt bot has no version labelled staging");
    // A prefix shorter than 7 stays a 400 naming version, whatever it looks like.
    const short = await t.request("GET", "/api/v2/prompts/bot?version=beef");
    expect(short.status).toBe(400);
    expect(short.body.error).toBe(
      "version: must be production, latest, a label, or 7-64 lowercase hex characters of a version hash",
    );
  });

  it("removing a label: it is gone from the next read on; production cannot be removed", async () => {
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v2, label: "staging" } });
    // Cached now.
    expect((await t.request("GET", "/api/v2/prompts/bot?version=staging")).body.data.version).toBe(v2);
    const removed = await t.request("DELETE", "/api/v2/prompts/bot/labels/staging");
    expect(removed.body).toEqual({ success: true, data: { id: "bot", label: "staging", removed: true } });
    const after = await t.request("GET", "/api/v2/prompts/bot?version=staging");
    expect(after.status).toBe(400);
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.labels).toEqual({ production: v1 });
    const production = await t.request("DELETE", "/api/v2/prompts/bot/labels/production");
    expect(production.status).toBe(403);
    expect(production.body.error).toBe("label: production cannot be removed; publish another version instead");
    const missing = await t.request("DELETE", "/api/v2/prompts/bot/labels/staging");
    expect(missing.status).toBe(404);
  });

  it("a label's move is an event carrying the label, both versions, and (include=read) the label's new read", async () => {
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    const stream = await openEventStream(url, t.key, {}, "?include=read");
    try {
      await stream.next((e) => e.event === "ready");
      await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v1, label: "staging" } });
      await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v2, label: "staging" } });
      const moved = await stream.next(
        (e) => e.event === "prompt.label_moved" && JSON.parse(e.data as string).version === v2,
      );
      const data = JSON.parse(moved.data as string);
      expect(data).toMatchObject({
        type: "prompt.label_moved",
        prompt_id: "bot",
        version: v2,
        production_version: v1,
        label: "staging",
        previous_version: v1,
        rollout: null,
      });
      expect(data.read).toMatchObject({
        id: "bot",
        version: v2,
        label: "staging",
        labels: { production: v1, staging: v2 },
      });
    } finally {
      stream.close();
      await t.app.server.close();
    }
  });

  it.each([
    ["beef", "label: must not be made only of hexadecimal characters"],
    ["latest", "label: latest is not a label: it always names the newest version"],
    ["Staging", "label: must start with a lowercase letter and hold only a-z, 0-9, _ and -, 32 characters at most"],
  ])("a label named %s is refused with a 400 naming label", async (label, error) => {
    const res = await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v2, label } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect((await t.request("GET", "/api/v2/prompts/bot/versions")).body.data.labels).toEqual({ production: v1 });
  });
});
