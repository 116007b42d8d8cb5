/**
 * docs/releases.md, "Label settings": owners (and the operator's CLI) set a label's description, protection
 * and fallback; a prompt that lacks a label is served its fallback, and the answer says so.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { ChangeBus } from "../../src/service/events/change-bus.js";
import { PromptService } from "../../src/service/prompts/prompt-service.js";
import { openStore } from "../../src/store/index.js";
import { useTestApp } from "../support/app.js";
import { cli, cliJson } from "../support/binary.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("label settings ($name)", (database) => {
  const t = useTestApp(database);
  let owner: Browser;
  let base = "";
  let v1 = "";
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    owner = await member(t, "owner");
    base = `/api/dashboard/projects/${t.project.projectId}`;
  });

  it("a prompt never staged is served its production version in staging, and the answer says so", async () => {
    const set = await owner.call("PUT", `${base}/labels/staging`, {
      body: { fallback: "production", description: "Try it here first" },
    });
    expect(set.body.data).toMatchObject({ name: "staging", fallback: "production", protected: false });
    const read = await t.request("GET", "/api/v2/prompts/bot?version=staging");
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ version: v1, label: "production", fallback_for: "staging" });
    // Once staged, its own version, and no fallback_for.
    const v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v2, label: "staging" } });
    const staged = await t.request("GET", "/api/v2/prompts/bot?version=staging");
    expect(staged.body.data.version).toBe(v2);
    expect(staged.body.data.label).toBe("staging");
    expect(staged.body.data.fallback_for).toBeUndefined();
    const settings = await owner.call("GET", `${base}/labels`);
    expect(settings.body.data.labels).toEqual([
      // Production has no settings, but labels the one published prompt. No label requires an evaluation
      // (issue 39's fields, added to every label's settings).
      {
        name: "production",
        description: "",
        protected: false,
        fallback: null,
        updated_at: "",
        in_use: 1,
        required_evaluation: null,
        rollback_allowed: true,
      },
      {
        name: "staging",
        description: "Try it here first",
        protected: false,
        fallback: "production",
        updated_at: expect.any(String),
        in_use: 1,
        required_evaluation: null,
        rollback_allowed: true,
      },
    ]);
  });

  it("a fallback cycle, a fallback to itself, and an editor or a key setting it are refused", async () => {
    await owner.call("PUT", `${base}/labels/qa`, { body: { fallback: "staging" } });
    const cycle = await owner.call("PUT", `${base}/labels/staging`, { body: { fallback: "qa" } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error).toBe("fallback: qa falls back to staging: a cycle");
    const self = await owner.call("PUT", `${base}/labels/staging`, { body: { fallback: "staging" } });
    expect(self.body.error).toBe("fallback: a label cannot fall back to itself");
    const editor = await member(t, "editor");
    const byEditor = await editor.call("PUT", `${base}/labels/staging`, { body: { protected: true } });
    expect(byEditor.status).toBe(403);
    expect(byEditor.body.error).toBe("role: editor may not do this; it needs owner");
  });
});

describe.each(DATABASES)("label and release commands ($name)", (database) => {
  it("label set and list, with --json; release list", async () => {
    const { url, drop } = await database.create();
    try {
      const { project } = await cliJson(url, [
        "project",
        "create",
        (await cliJson(url, ["org", "create", "acme"])).id,
        "web",
      ]);
      const set = await cliJson(url, [
        "label",
        "set",
        project.id,
        "production",
        "--protected",
        "--description",
        "Live",
      ]);
      expect(set).toMatchObject({ name: "production", protected: true, description: "Live", fallback: null });
      const staging = await cliJson(url, ["label", "set", project.id, "staging", "--fallback", "production"]);
      expect(staging).toMatchObject({ name: "staging", protected: false, fallback: "production" });
      const listed = await cliJson(url, ["label", "list", project.id]);
      expect(listed.labels.map((l: { name: string; protected: boolean }) => [l.name, l.protected])).toEqual([
        ["production", true],
        ["staging", false],
      ]);
      const human = await cli(url, ["label", "list", project.id]);
      expect(human.stdout).toBe(
        "production (protected)  0 prompt(s)  Live\nstaging → falls back to production  0 prompt(s)\n",
      );
      const bad = await cli(url, ["label", "set", project.id, "beef"]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toBe("error: label: must not be made only of hexadecimal characters\n");
      expect(await cliJson(url, ["release", "list", project.id])).toEqual({ releases: [] });
      // A request from the command line, listed; only a person approves it, in the dashboard.
      const store = await openStore(url);
      try {
        const prompts = new PromptService(store, new ChangeBus(), { guardText: "G" });
        await prompts.create(
          {
            projectId: project.id,
            projectName: "web",
            orgId: project.org_id,
            plan: "free",
            actor: "cli",
            access: "publish",
          },
          { id: "bot", name: "Bot", markdown: "# A\none" },
        );
      } finally {
        await store.close();
      }
      const asked = await cliJson(url, [
        "release",
        "request",
        project.id,
        "bot",
        "production",
        "latest",
        "--message",
        "first",
      ]);
      expect(asked).toMatchObject({
        status: "pending",
        label: "production",
        from_version: null,
        message: "first",
        requested_by: "cli",
      });
      const pending = await cliJson(url, ["release", "list", project.id, "--status", "pending"]);
      expect(pending.releases.map((r: { id: string }) => r.id)).toEqual([asked.id]);
      const refused = await cli(url, [
        "release",
        "request",
        project.id,
        "bot",
        "production",
        "latest",
        "--percent",
        "0",
      ]);
      expect(refused.stderr).toBe("error: percent: must be a whole number from 1 to 100\n");
    } finally {
      await drop();
    }
  });
});
