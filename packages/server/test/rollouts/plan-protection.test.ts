/**
 * Plans and protection (docs/rollouts.md "Plans"; docs/decisions.md "Rollout plans"): on a protected label a
 * plan starts only from an approved release request that carries it, and the approval covers the whole plan
 * (the server's own advances need none); an API key may pause or abort it, never advance or resume it; an
 * abort needs no approval. A required evaluation must pass before a plan starts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { useTestApp } from "../support/app.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, ended } from "../support/evaluations.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";
import { COMPRESSED, handRunner, plan, planEvents, postArms } from "./plan-support.js";

describe.each(DATABASES)("rollout plans on protected and gated labels ($name)", (database) => {
  const t = useTestApp(database, { ...COMPRESSED, PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let v1 = "";
  let v2 = "";
  let owner: Caller;
  const url = "/api/v2/prompts/bot/labels/production/plan";
  const call = (method: string, path: string, body?: unknown) =>
    t.request(method, path, body === undefined ? {} : { body });

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
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

  describe("protected", () => {
    let approver: Browser;
    beforeEach(async () => {
      await t.app.prompts.configureLabel(owner, "production", { protected: true });
      approver = await member(t, "owner");
    });

    it("starts from an approved request with a plan; the server advances it; a key pauses and aborts, never advances", async () => {
      const refused = await call("POST", url, { version: v2, ...plan([{ percent: 10 }]) });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(
        /^label: production is protected; a plan on it starts only from an approved release request/,
      );

      const spec = plan([{ percent: 10 }, { percent: 25 }, { percent: 50 }]);
      const mismatch = await call("POST", "/api/v2/prompts/bot/releases", {
        label: "production",
        version: v2,
        percent: 20,
        plan: spec,
      });
      expect([mismatch.status, mismatch.body.error]).toEqual([
        400,
        "percent: must be the plan's first step's percent (10), or left out",
      ]);
      const asked = await call("POST", "/api/v2/prompts/bot/releases", {
        label: "production",
        version: v2,
        plan: spec,
      });
      expect(asked.status, JSON.stringify(asked.body)).toBe(201);
      expect(asked.body.data).toMatchObject({ status: "pending", percent: 10, plan: spec });
      // Nothing runs before the approval.
      expect((await call("GET", url)).status).toBe(404);
      const base = `/api/dashboard/projects/${t.project.projectId}`;
      const approved = await approver.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const started = (await call("GET", url)).body.data;
      expect(started).toMatchObject({
        status: "running",
        step: 0,
        percent: 10,
        version: v2,
        from_version: v1,
        release_id: asked.body.data.id,
        started_by: asked.body.data.requested_by,
      });
      expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.rollout).toMatchObject({ percent: 10 });

      // The approval covers the plan: the server's own advance needs none.
      await postArms(call, "bot", { candidate: v2, current: v1, candidateOk: 95, currentOk: 95 }, started.started_at);
      await t.app.outcomes.flush();
      await handRunner(t, t.store).tick();
      expect((await call("GET", url)).body.data.step).toBe(1);

      // A key: advance and resume are refused, pause and abort are not.
      for (const command of ["advance", "resume"]) {
        const res = await call("POST", `${url}/${command}`);
        expect(res.status).toBe(403);
        expect(res.body.error).toMatch(
          /^label: production is protected; (advancing|resuming) its plan is done by a person/,
        );
      }
      expect((await call("POST", `${url}/pause`)).body.data.status).toBe("paused");
      expect((await call("POST", `${url}/resume`)).status).toBe(403);
      const resumed = await approver.call("POST", `${base}/prompts/bot/labels/production/plan/resume`);
      expect(resumed.body.data.status).toBe("running");
      const aborted = await call("POST", `${url}/abort`);
      expect(aborted.status).toBe(200);
      expect(aborted.body.data).toMatchObject({ status: "aborted", percent: 0 });
      expect(aborted.body.data.end_reason).toMatch(/^aborted by key:/);
      const served = (await t.request("GET", "/api/v2/prompts/bot")).body.data;
      expect([served.version, served.rollout]).toEqual([v1, undefined]);
      expect((await planEvents(t.store, "bot")).map((e) => e.type)).toEqual(["rollout.advanced", "rollout.aborted"]);
      // No release request was asked for the abort.
      expect((await call("GET", "/api/v2/releases")).body.data.releases).toHaveLength(1);
    });
  });

  describe("gated", () => {
    let standIn: StandIn;
    beforeEach(async () => {
      standIn = await startStandIn();
      capitals(standIn);
    });
    afterEach(async () => {
      await standIn.close();
    });

    it("a required evaluation must pass before a plan starts", async () => {
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
      const refused = await call("POST", url, { version: v2, ...plan([{ percent: 10 }]) });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatch(/^label: production requires a passing evaluation of /);
      expect((await call("GET", url)).status).toBe(404);
      const audit = (await t.request("GET", "/api/v2/audit?limit=5")).body.data.entries;
      expect(audit[0]).toMatchObject({ action: "gate.refused", target: "bot:production" });

      const ran = await call("POST", "/api/v2/prompts/bot/labels/production/evaluations", { version: v2 });
      expect((await ended(t, ran.body.data.id)).status).toBe("done");
      const started = await call("POST", url, { version: v2, ...plan([{ percent: 10 }]) });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      expect(started.body.data).toMatchObject({ status: "running", percent: 10 });
    });
  });
});
