/**
 * Updating includes on purpose (docs/includes.md): a piece's publish changes no dependent's read; an update
 * saves a new version with the new pins and publishes it only if asked and only where allowed: a protected
 * label gets a release request, a gated one needs its required evaluation to have passed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, ended } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";
import { includesOn, pinnedHash } from "./includes-support.js";

const SUPPORT = [{ title: "S", content: "Rules: {{> safety}}" }];

describe.each(DATABASES)("updating includes ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  const x = includesOn(t);
  let v1 = "";
  let s1 = "";
  let owner: Caller;
  beforeEach(async () => {
    await x.unlimited();
    v1 = await x.create("safety", [{ title: "R", content: "one" }]);
    s1 = await x.create("support", SUPPORT);
    owner = {
      projectId: t.project.projectId,
      projectName: "p",
      orgId: t.project.orgId,
      plan: "unlimited",
      actor: "user:owner@example.com",
      access: "publish",
      role: "owner",
    };
  });

  it("a piece's publish changes no dependent's read until it is updated, and publishes only when asked", async () => {
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    // Read twice: the cached read is the same bytes as the first.
    for (let i = 0; i < 2; i++) {
      expect((await x.read("support")).prompt).toBe("<S>\nRules: one\n</S>");
      expect((await x.read("support", "version=latest&guard=false")).version).toBe(s1);
    }
    const s2 = pinnedHash(SUPPORT, { safety: v2 });
    const res = await x.call("POST", "/api/v2/prompts/support/update-includes", {});
    expect(res.body).toEqual({
      success: true,
      data: {
        id: "support",
        from_version: s1,
        version: s2,
        created: true,
        updated: [{ include: "safety", from: v1, to: v2 }],
        outcome: "saved",
        label: null,
      },
    });
    // Saved, not published: production serves what it did; latest the new pins.
    expect((await x.read("support")).prompt).toBe("<S>\nRules: one\n</S>");
    expect((await x.read("support", "version=latest&guard=false")).prompt).toBe("<S>\nRules: two\n</S>");
    const versions = (await x.call("GET", "/api/v2/prompts/support/versions")).body.data.versions;
    expect(versions[0]).toMatchObject({ version: s2, message: "Includes updated: safety" });
    // Again, with publish: from what production serves, the same new version (made already), now in production.
    const published = await x.call("POST", "/api/v2/prompts/support/update-includes", { publish: true });
    expect(published.body.data).toEqual({
      id: "support",
      from_version: s1,
      version: s2,
      created: false,
      updated: [{ include: "safety", from: v1, to: v2 }],
      outcome: "published",
      label: "production",
    });
    expect((await x.read("support")).prompt).toBe("<S>\nRules: two\n</S>");
    // Up to date: nothing to save, nothing to publish.
    const again = await x.call("POST", "/api/v2/prompts/support/update-includes", { publish: true });
    expect(again.body.data).toMatchObject({
      from_version: s2,
      version: s2,
      created: false,
      updated: [],
      outcome: "published",
    });
  });

  it("updates only the includes asked for, keeps an include of a hash, and starts from the version asked", async () => {
    const tone1 = await x.create("tone", [{ title: "T", content: "calm" }]);
    const sections = [{ title: "A", content: `{{> safety}} {{> tone}} {{> safety@${v1.slice(0, 7)}}}` }];
    const a1 = await x.create("a", sections);
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    const tone2 = await x.save("tone", [{ title: "T", content: "warm" }], { publish: true });
    const res = await x.call("POST", "/api/v2/prompts/a/update-includes", { only: ["tone"] });
    expect(res.body.data).toMatchObject({
      from_version: a1,
      version: pinnedHash(sections, { safety: v1, tone: tone2, [`safety@${v1.slice(0, 7)}`]: v1 }),
      updated: [{ include: "tone", from: tone1, to: tone2 }],
    });
    const all = await x.call("POST", "/api/v2/prompts/a/update-includes", { version: "latest" });
    expect(all.body.data.updated).toEqual([{ include: "safety", from: v1, to: v2 }]);
    expect((await x.read("a", "version=latest&guard=false")).prompt).toBe("<A>\ntwo warm one\n</A>");
    // Publishing needs publish; a write key saves, nothing else.
    const write = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "write" })).key;
    const refused = await x.call("POST", "/api/v2/prompts/a/update-includes", { publish: true }, write);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe(
      "scope: updating a prompt's includes and publishing needs a key with scope publish; this key has scope write",
    );
    const bad = await x.call("POST", "/api/v2/prompts/a/update-includes", { only: [] });
    expect(bad.body).toEqual({ success: false, error: "only: must name at least one prompt" });
    expect((await x.call("POST", "/api/v2/prompts/nope/update-includes", {})).status).toBe(404);
  });

  it("asks for a release of a protected label instead of moving it; the approval moves it", async () => {
    await t.app.prompts.configureLabel(owner, "production", { protected: true });
    const v2 = await x.save("safety", [{ title: "R", content: "two" }]);
    // The piece's own production is protected too: its pointer moves by a release.
    const asked = await x.call("POST", "/api/v2/prompts/safety/releases", { label: "production", version: v2 });
    await t.app.prompts.decideRelease(owner, asked.body.data.id, { approve: true });
    const res = await x.call("POST", "/api/v2/prompts/support/update-includes", { publish: true });
    const s2 = pinnedHash(SUPPORT, { safety: v2 });
    expect(res.body.data).toMatchObject({
      version: s2,
      created: true,
      outcome: "release_requested",
      label: "production",
      release: {
        prompt_id: "support",
        status: "pending",
        label: "production",
        version: s2,
        from_version: s1,
        message: `Includes updated: safety ${v1.slice(0, 12)} → ${v2.slice(0, 12)}`,
      },
    });
    expect((await x.read("support")).prompt).toBe("<S>\nRules: one\n</S>");
    await t.app.prompts.decideRelease(owner, res.body.data.release.id, { approve: true });
    expect((await x.read("support")).prompt).toBe("<S>\nRules: two\n</S>");
  });

  it("updates the chosen prompts that include a piece, each on its own, from the piece", async () => {
    const f1 = await x.create("faq", [{ title: "F", content: "{{> safety}}!" }]);
    await x.create("other", [{ title: "O", content: "none" }]);
    await t.app.prompts.configureLabel(owner, "staging", { protected: true });
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    const res = await x.call("POST", "/api/v2/prompts/safety/included-by/update", {
      prompts: ["support", "faq", "nope"],
      publish: true,
    });
    expect(res.body.data.id).toBe("safety");
    expect(res.body.data.results).toEqual([
      expect.objectContaining({ id: "support", from_version: s1, outcome: "published", created: true }),
      expect.objectContaining({ id: "faq", from_version: f1, outcome: "published", created: true }),
      { id: "nope", error: "prompt nope not found", status: 404 },
    ]);
    expect((await x.read("faq")).prompt).toBe("<F>\ntwo!\n</F>");
    expect((await x.read("support")).prompt).toBe("<S>\nRules: two\n</S>");
    // Chosen by default: those whose served version is behind (none now), for the label asked.
    const v3 = await x.save("safety", [{ title: "R", content: "three" }], { publish: true });
    const batch = await x.call("POST", "/api/v2/prompts/safety/included-by/update", {});
    expect(batch.body.data.results.map((r: { id: string; outcome: string }) => [r.id, r.outcome])).toEqual([
      ["faq", "saved"],
      ["support", "saved"],
    ]);
    expect((await x.read("faq", "version=latest&guard=false")).prompt).toBe("<F>\nthree!\n</F>");
    expect(v3).not.toBe(v2);
  });

  it("updates over MCP as over REST", async () => {
    const v2 = await x.save("safety", [{ title: "R", content: "two" }], { publish: true });
    const res = await x.call(
      "POST",
      "/api/v2/mcp",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "update_includes", arguments: { id: "support", publish: true } },
      },
      undefined,
      { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    );
    const line = String(res.body)
      .split("\n")
      .find((l) => l.startsWith("data: "));
    const data = JSON.parse((line as string).slice(6)).result.structuredContent;
    expect(data).toMatchObject({ id: "support", version: pinnedHash(SUPPORT, { safety: v2 }), outcome: "published" });
  });

  describe("with a required evaluation", () => {
    let standIn: StandIn;
    beforeEach(async () => {
      standIn = await startStandIn();
      capitals(standIn);
    });
    afterEach(async () => {
      await standIn.close();
    });

    it("leaves a gated label where it is until the new version's evaluation passed, then publishes", async () => {
      const connection = await standInConnection(t, standIn);
      const dataset = await createDataset(t, "cases", [{ vars: { n: "1" } }]);
      await t.app.prompts.configureLabel(owner, "production", {
        required_evaluation: {
          dataset: dataset.id,
          checks: [{ type: "contains", value: "TWO" }],
          connection,
          model: { name: "caps" },
          guard: false,
          min_pass_rate: 1,
        } as never,
      });
      const v2 = await x.save("safety", [{ title: "R", content: "two" }]);
      // The piece's own gate: its version passes (TWO), then moves.
      const ran = await x.call("POST", "/api/v2/prompts/safety/labels/production/evaluations", { version: v2 });
      expect((await ended(t, ran.body.data.id)).status).toBe("done");
      expect((await x.call("POST", "/api/v2/prompts/safety/publish", { version: v2 })).status).toBe(200);
      const s2 = pinnedHash(SUPPORT, { safety: v2 });
      const res = await x.call("POST", "/api/v2/prompts/support/update-includes", { publish: true });
      expect(res.body.data).toMatchObject({ version: s2, created: true, outcome: "blocked", label: "production" });
      expect(res.body.data.reason).toBe(
        `label: production requires a passing evaluation of ${s2.slice(0, 12)}: not evaluated; run it: POST /api/v2/prompts/support/labels/production/evaluations {"version":"${s2}"} (or "Run required evaluation" on the release request)`,
      );
      expect((await x.read("support")).prompt).toBe("<S>\nRules: one\n</S>");
      const evaluation = await x.call("POST", "/api/v2/prompts/support/labels/production/evaluations", { version: s2 });
      expect((await ended(t, evaluation.body.data.id)).status).toBe("done");
      const again = await x.call("POST", "/api/v2/prompts/support/update-includes", { publish: true });
      expect(again.body.data).toMatchObject({ version: s2, created: false, outcome: "published" });
      expect((await x.read("support")).prompt).toBe("<S>\nRules: two\n</S>");
    });
  });
});
