/**
 * docs/releases.md, "Release requests": a label never points at a version its prompt does not hold. A
 * request made before its prompt was deleted and made again with the same id must not move the new prompt's
 * label: deleting a prompt cancels its pending requests (audited), an approval of a request whose version
 * the prompt does not hold cancels it, and `moveLabel` itself refuses such a target. Reads keep working.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { moveLabel, NO_GATE } from "../../src/service/prompts/label-moves.js";
import { PromptChange } from "../../src/service/prompts/prompt-changes.js";
import { ProjectStore } from "../../src/store/prompts/prompts.js";
import { useTestApp } from "../support/app.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, toolData } from "../support/mcp.js";

describe.each(DATABASES)("a release request does not outlive its prompt ($name)", (database) => {
  const t = useTestApp(database);
  let vOld = "";
  let editor: Browser;
  let owner: Browser;
  let base = "";

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    vOld = (await t.request("POST", "/api/v2/prompts", { body: { id: "bot", name: "Bot", markdown: "# A\nold" } })).body
      .data.version;
    editor = await member(t, "editor");
    owner = await member(t, "owner");
    base = `/api/dashboard/projects/${t.project.projectId}`;
    expect((await owner.call("PUT", `${base}/labels/production`, { body: { protected: true } })).status).toBe(200);
  });

  const projectStore = () => {
    const { db, queries, channel, events } = t.store;
    return new ProjectStore(db, queries, channel, events, t.project.projectId);
  };

  /** Every read surface serves the re-created prompt's latest version. */
  async function readsServe(version: string): Promise<void> {
    const v2 = await t.request("GET", "/api/v2/prompts/bot");
    expect([v2.status, v2.body.data.version, v2.body.data.label]).toEqual([200, version, "latest"]);
    const v1 = await t.request("GET", "/api/v1/prompts/bot");
    expect([v1.status, v1.body.data.version]).toEqual([200, version]);
    const listed = await t.request("GET", "/api/v2/prompts");
    expect(listed.body.data.prompts.map((p: { id: string; production_version: string | null }) => p)).toMatchObject([
      { id: "bot", production_version: null },
    ]);
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    const client = await connectMcp(url, t.key, "2026-07-28");
    try {
      const got = toolData((await client.callTool({ name: "get_prompt", arguments: { id: "bot" } })) as never);
      expect([got.error, got.data?.version]).toEqual([undefined, version]);
    } finally {
      await client.close();
      await t.app.server.close();
    }
  }

  it.each([
    ["other content", "# A\nnew"],
    ["the same content (the same hash)", "# A\nold"],
  ])("request, delete, re-create with %s, approve: cancelled, and nothing moves", async (_name, markdown) => {
    const asked = await editor.call("POST", `${base}/prompts/bot/releases`, {
      body: { label: "production", version: vOld },
    });
    expect(asked.status).toBe(201);
    const id = asked.body.data.id as string;

    expect((await t.request("DELETE", "/api/v2/prompts/bot")).status).toBe(200);
    const cancelled = await t.request("GET", `/api/v2/releases/${id}`);
    expect(cancelled.body.data).toMatchObject({
      status: "cancelled",
      version: vOld,
      from_version: null,
      comment: "the prompt was deleted",
    });
    expect(cancelled.body.data.decided_by).toMatch(/^key:/);
    const trail = (await t.request("GET", "/api/v2/audit")).body.data.entries.slice(0, 2);
    expect(trail.map((e: Record<string, unknown>) => [e.action, e.target, e.before, e.after])).toEqual([
      ["prompt.deleted", "bot", vOld, null],
      ["release.cancelled", "bot:production", null, vOld],
    ]);

    const vNew = (await t.request("POST", "/api/v2/prompts", { body: { id: "bot", name: "Bot", markdown } })).body.data
      .version;
    const approved = await owner.call("POST", `${base}/releases/${id}/approve`, { body: {} });
    expect([approved.status, approved.body.error]).toEqual([409, `release: ${id} is already cancelled`]);
    expect((await t.request("GET", "/api/v2/releases?status=pending")).body.data.releases).toEqual([]);
    expect((await t.request("GET", "/api/v2/releases?status=cancelled")).body.data.releases).toHaveLength(1);
    await readsServe(vNew);
  });

  it("approving a request whose version the prompt does not hold cancels it (one left pending from before)", async () => {
    // A request that outlived its prompt without being cancelled: the row as an older server left it.
    await t.request("DELETE", "/api/v2/prompts/bot");
    const vNew = (
      await t.request("POST", "/api/v2/prompts", { body: { id: "bot", name: "Bot", markdown: "# A\nnew" } })
    ).body.data.version;
    await projectStore()
      .labels()
      .insertRelease({
        id: "rel_left_over",
        prompt_id: "bot",
        label: "production",
        version: vOld,
        from_version: null,
        percent: null,
        message: "",
        status: "pending",
        requested_by: `user:${editor.email}`,
        requested_at: new Date().toISOString(),
        decided_by: null,
        decided_at: null,
        comment: null,
        plan: null,
      });
    const approved = await owner.call("POST", `${base}/releases/rel_left_over/approve`, { body: {} });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ status: "cancelled", decided_by: `user:${owner.email}` });
    const trail = (await t.request("GET", "/api/v2/audit")).body.data.entries.slice(0, 1);
    expect(trail.map((e: Record<string, unknown>) => [e.action, e.target, e.before, e.after])).toEqual([
      ["release.cancelled", "bot:production", null, vOld],
    ]);
    await readsServe(vNew);
  });

  it("moveLabel refuses a target the prompt does not hold, for any label", async () => {
    const store = projectStore();
    const caller = (await t.app.tenants.findGrant(t.key)) as never;
    const missing = "f".repeat(64);
    for (const label of ["production", "staging"]) {
      await expect(
        store.transaction(async (tx) => {
          const prompt = await tx.getPrompt("bot");
          if (!prompt) throw new Error("no prompt");
          await moveLabel(
            tx,
            new PromptChange(caller, "bot", "2026-01-01T00:00:00.000Z"),
            prompt,
            { label, target: missing },
            "x",
            NO_GATE,
          );
        }),
      ).rejects.toThrow(`version: prompt bot holds no version ${missing}`);
    }
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data).toMatchObject({ version: vOld, labels: {} });
  });
});
