/**
 * docs/evaluations.md, "Required evaluations": a label with a required evaluation points to a version only
 * when a finished evaluation run for that requirement, of that exact version, passed. One table over every
 * path that moves a label × every state of the candidate: ungated, passed, failed, stale, not evaluated.
 * A refusal is a 409 naming the label and what is missing, moves nothing, and is an audit row; a pass is too.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, ended } from "../support/evaluations.js";
import { connectMcp, toolData } from "../support/mcp.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";

type State = "ungated" | "passed" | "failed" | "stale" | "not evaluated";
const STATES: State[] = ["ungated", "passed", "failed", "stale", "not evaluated"];

describe.each(DATABASES)("required evaluations gate every label move ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  let v1 = "";
  /** Passes the checks ("TWO" in the answer). */
  let good = "";
  /** Fails them. */
  let bad = "";
  let publishKey = "";
  let owner: Caller;
  let requirement: Record<string, unknown>;

  beforeEach(async () => {
    standIn = await startStandIn();
    capitals(standIn);
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v1, label: "staging" } });
    good = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
    bad = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\nthree" } })).body.data.version;
    publishKey = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "publish" })).key;
    owner = {
      projectId: t.project.projectId,
      projectName: "p",
      orgId: t.project.orgId,
      plan: "unlimited",
      actor: "user:owner@example.com",
      access: "publish",
      role: "owner",
    };
    const connection = await standInConnection(t, standIn);
    const dataset = await createDataset(t, "cases", [{ vars: { n: "1" } }, { vars: { n: "2" } }]);
    requirement = {
      dataset: dataset.id,
      checks: [{ type: "contains", value: "TWO" }],
      connection,
      model: { name: "caps" },
      guard: false,
      min_pass_rate: 1,
    };
  });
  afterEach(async () => {
    await standIn.close();
  });

  async function require(label: string, body: Record<string, unknown> = requirement) {
    await t.app.prompts.configureLabel(owner, label, { required_evaluation: body as never });
  }

  /** Runs the label's required evaluation for a version, to its end. */
  async function evaluate(label: string, version: string) {
    const res = await t.request("POST", `/api/v2/prompts/bot/labels/${label}/evaluations`, { body: { version } });
    expect([res.status, res.body.error]).toEqual([202, undefined]);
    return ended(t, res.body.data.id);
  }

  /** Puts the candidate in the state, for the label; returns the version the path moves to. */
  async function arrange(state: State, label: string): Promise<string> {
    if (state === "ungated") return good;
    await require(label);
    if (state === "passed") await evaluate(label, good);
    if (state === "failed") {
      await evaluate(label, bad);
      return bad;
    }
    if (state === "stale") {
      await evaluate(label, good);
      await require(label, { ...requirement, min_pass_rate: 0.99 });
    }
    return good;
  }

  const pointers = async () => {
    const list = await t.request("GET", "/api/v2/prompts/bot/versions");
    const read = await t.request("GET", "/api/v2/prompts/bot?guard=false");
    const staging = await t.request("GET", "/api/v2/prompts/bot?version=staging&guard=false");
    return {
      versions: list.body.data.versions?.length,
      production: read.body.data.version,
      staging: staging.body.data.version,
    };
  };

  async function rest(method: string, url: string, body?: unknown) {
    const res = await t.request(method, url, { key: publishKey, ...(body === undefined ? {} : { body }) });
    return { status: res.status, error: res.body.error as string | undefined };
  }

  /** Every path that moves a label: [name, label it moves, how]. */
  const paths: [string, string, (target: string) => Promise<{ status: number; error: string | undefined }>][] = [
    ["REST publish of production", "production", (v) => rest("POST", "/api/v2/prompts/bot/publish", { version: v })],
    [
      "REST publish of staging",
      "staging",
      (v) => rest("POST", "/api/v2/prompts/bot/publish", { version: v, label: "staging" }),
    ],
    [
      "REST rollout start",
      "production",
      (v) => rest("POST", "/api/v2/prompts/bot/publish", { version: v, percent: 10 }),
    ],
    [
      "REST plan start",
      "production",
      (v) =>
        rest("POST", "/api/v2/prompts/bot/labels/production/plan", {
          version: v,
          steps: [{ percent: 10, min_duration_seconds: 0 }],
          guardrails: { ok_rate_drop: 0.05 },
        }),
    ],
    [
      "REST save with publish",
      "production",
      (v) => rest("PUT", "/api/v2/prompts/bot", { markdown: v === good ? "# A\ntwo" : "# A\nthree", publish: true }),
    ],
    [
      "REST import with production_version",
      "production",
      async (v) => {
        const exported = await t.request("GET", `/api/v2/prompts/bot?version=${v}&guard=false`);
        return rest("POST", "/api/v2/import", {
          id: "bot",
          name: "Bot",
          versions: [
            {
              version: v,
              message: null,
              created_at: exported.body.data.updated_at,
              saved_by: null,
              sections: exported.body.data.sections.map((s: any) => ({
                title: s.title,
                content: s.content,
                enabled: s.enabled,
              })),
              tools: [],
            },
          ],
          latest_version: bad,
          production_version: v,
        });
      },
    ],
    [
      "MCP publish_prompt",
      "production",
      async (v) => {
        const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
        const client = await connectMcp(url, publishKey, "2026-07-28");
        try {
          const result = toolData(
            (await client.callTool({ name: "publish_prompt", arguments: { id: "bot", version: v } })) as never,
          );
          return { status: result.error ? 409 : 200, error: result.error };
        } finally {
          await client.close();
        }
      },
    ],
    [
      "a release request's approval",
      "staging",
      async (v) => {
        await t.app.prompts.configureLabel(owner, "staging", { protected: true });
        const asked = await rest("POST", "/api/v2/prompts/bot/releases", { label: "staging", version: v });
        expect(asked.status).toBe(201);
        const pending = await t.request("GET", "/api/v2/releases?status=pending");
        const id = pending.body.data.releases[0].id;
        try {
          await t.app.prompts.decideRelease(owner, id, { approve: true });
          return { status: 200, error: undefined };
        } catch (error: any) {
          return { status: error.status, error: error.message };
        }
      },
    ],
  ];

  for (const [name, label, move] of paths) {
    for (const state of STATES) {
      it(`${name}, ${state}`, async () => {
        const target = await arrange(state, label);
        const before = await pointers();
        const answer = await move(target);
        const audit = (await t.request("GET", "/api/v2/audit?limit=100")).body.data.entries as any[];
        const gateRows = audit.filter((e) => e.action.startsWith("gate.")).map((e) => [e.action, e.target, e.after]);
        if (state === "ungated" || state === "passed") {
          expect([answer.status, answer.error]).toEqual([answer.status < 300 ? answer.status : 200, undefined]);
          const after = await pointers();
          if (name !== "REST rollout start" && name !== "REST plan start")
            expect(after[label === "production" ? "production" : "staging"]).toBe(target);
          expect(gateRows).toEqual(state === "passed" ? [["gate.passed", `bot:${label}`, target]] : []);
          return;
        }
        const what = {
          failed: "failed: pass rate 0 < 1",
          stale: "evaluated against an earlier requirement (the label's required evaluation changed since)",
          "not evaluated": "not evaluated;",
        }[state];
        expect(answer.status).toBe(409);
        expect(answer.error).toContain(
          `label: ${label} requires a passing evaluation of ${target.slice(0, 12)}: ${what}`,
        );
        expect(answer.error).toContain(
          `run it: POST /api/v2/prompts/bot/labels/${label}/evaluations {"version":"${target}"}`,
        );
        expect(await pointers()).toEqual(before);
        expect(gateRows).toEqual([["gate.refused", `bot:${label}`, target]]);
      });
    }
  }

  it("a new prompt created published onto a gated production is refused: nothing could have evaluated it", async () => {
    await require("production");
    const res = await rest("POST", "/api/v2/prompts", {
      id: "fresh",
      name: "Fresh",
      markdown: "# A\nx",
      publish: true,
    });
    expect(res.status).toBe(409);
    expect(res.error).toContain("label: production requires a passing evaluation of");
    expect((await t.request("GET", "/api/v2/prompts/fresh")).status).toBe(404);
  });

  it("a rollback to a version the label served before passes unless the label says otherwise", async () => {
    await require("production");
    await evaluate("production", good);
    expect((await rest("POST", "/api/v2/prompts/bot/publish", { version: good })).status).toBe(200);
    // v1 served production before: the incident path needs no provider.
    expect((await rest("POST", "/api/v2/prompts/bot/publish", { version: v1 })).status).toBe(200);
    await t.app.prompts.configureLabel(owner, "production", { rollback_allowed: false });
    // Now a version served before needs its evaluation like any other: good has one, v1 none.
    expect((await rest("POST", "/api/v2/prompts/bot/publish", { version: good })).status).toBe(200);
    const refused = await rest("POST", "/api/v2/prompts/bot/publish", { version: v1 });
    expect(refused.status).toBe(409);
    expect(refused.error).toContain(
      `label: production requires a passing evaluation of ${v1.slice(0, 12)}: not evaluated;`,
    );
    const audit = (await t.request("GET", "/api/v2/audit?limit=100")).body.data.entries as any[];
    expect(audit.filter((e) => e.action === "label.requirement_changed").map((e) => e.target)).toEqual([
      "label:production",
      "label:production",
    ]);
  });

  it("the gate state is readable: not evaluated, then passed", async () => {
    await require("production");
    const before = await t.request("GET", `/api/v2/prompts/bot/labels/production/gate?version=${good}`);
    expect(before.body.data).toEqual({
      label: "production",
      version: good,
      required: true,
      state: "not_evaluated",
      reason: "",
    });
    const evaluation = await evaluate("production", good);
    const after = await t.request("GET", `/api/v2/prompts/bot/labels/production/gate?version=${good}`);
    expect(after.body.data).toEqual({
      label: "production",
      version: good,
      required: true,
      state: "passed",
      evaluation: evaluation.id,
      pass_rate: 1,
    });
    const ungated = await t.request("GET", `/api/v2/prompts/bot/labels/staging/gate?version=${good}`);
    expect(ungated.body.data).toEqual({ label: "staging", version: good, required: false });
  });

  it("a dataset a required evaluation runs on cannot be deleted until the requirement lets it go", async () => {
    await require("production");
    const id = requirement.dataset as string;
    const refused = await t.request("DELETE", `/api/v2/datasets/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(
      `dataset: ${id} is what the required evaluation of label production runs on; change the label's requirement first`,
    );
    await t.app.prompts.configureLabel(owner, "production", { required_evaluation: null });
    expect((await t.request("DELETE", `/api/v2/datasets/${id}`)).status).toBe(200);
  });

  it("a requirement that could never run is refused before the label takes it, naming the field", async () => {
    const refusal = async (body: Record<string, unknown>) => {
      try {
        await t.app.prompts.configureLabel(owner, "production", { required_evaluation: body as never });
        return "accepted";
      } catch (error: any) {
        return `${error.status} ${error.message}`;
      }
    };
    expect(await refusal({ ...requirement, dataset: "ds_000000000000000000000000" })).toMatch(
      /^404 required_evaluation\.dataset: /,
    );
    expect(await refusal({ ...requirement, connection: "con_000000000000000000000000" })).toMatch(
      /^404 required_evaluation\.connection/,
    );
    expect(await refusal({ ...requirement, checks: [{ type: "judge", prompt: "nobody" }] })).toBe(
      '400 required_evaluation.checks[0].prompt: no prompt "nobody" in this project',
    );
    expect(await refusal({ ...requirement, min_check_pass_rates: { typo: 1 } })).toBe(
      "400 required_evaluation.min_check_pass_rates.typo: no check of the requirement is named typo",
    );
    const settings = await t.request("GET", "/api/v2/labels/production");
    expect(settings.body.data.required_evaluation).toBeNull();
  });
});
