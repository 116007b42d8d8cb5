/**
 * Two instances on one PostgreSQL database racing an approval (which moves a gated label) and a change of that
 * label's requirement (which makes the candidate's pass stale): either the move commits first, under the
 * requirement it passed, or the change does and the approval is refused. Never a move decided on a requirement
 * replaced before the move committed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");
const ROUNDS = 6;

describe.runIf(postgres)("required evaluations across two instances ('postgres')", () => {
  const two = useTwoInstances(postgres!, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    standIn.on("caps", {
      kind: "compute",
      answer: (body: any) => ({ content: String(body.messages[0].content).toUpperCase() }),
    });
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("an approval racing a requirement change: one order or the other, never both", async () => {
    const list = await two.call(0, "GET", "/api/v2/prompts");
    const project = list.body.data.project;
    const org = (await two.apps[0]!.tenants.findGrant(two.key))!;
    const owner: Caller = {
      projectId: project.id,
      projectName: project.name,
      orgId: org.orgId,
      plan: "unlimited",
      actor: "user:owner@example.com",
      access: "publish",
      role: "owner",
    };
    const connection = await two.apps[0]!.connections.create(
      { projectId: project.id, operator: true },
      { name: "Stand-in", base_url: standIn.baseUrl, api_key: standIn.apiKey, models: ["caps"] },
    );
    expect(
      (await two.call(0, "POST", "/api/v2/prompts", { id: "bot", name: "Bot", markdown: "# A\none", publish: true }))
        .status,
    ).toBe(201);
    const dataset = await two.call(1, "POST", "/api/v2/datasets", { name: "cases", cases: [{ vars: { n: "1" } }] });
    const requirement = (minPassRate: number) => ({
      dataset: dataset.body.data.id,
      checks: [{ type: "contains", value: "A" }],
      connection: connection.id,
      model: { name: "caps" },
      guard: false,
      min_pass_rate: minPassRate,
    });
    await two.apps[0]!.prompts.configureLabel(owner, "staging", {
      protected: true,
      required_evaluation: requirement(1) as never,
    });

    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const saved = await two.call(0, "PUT", "/api/v2/prompts/bot", { markdown: `# A\nround ${round}` });
      const version = saved.body.data.version as string;
      const evaluation = await two.call(1, "POST", "/api/v2/prompts/bot/labels/staging/evaluations", { version });
      await expect
        .poll(
          async () => (await two.call(0, "GET", `/api/v2/evaluations/${evaluation.body.data.id}`)).body.data.status,
          {
            timeout: 20_000,
          },
        )
        .toBe("done");
      const asked = await two.call(0, "POST", "/api/v2/prompts/bot/releases", { label: "staging", version });
      expect(asked.status).toBe(201);
      // The race: instance 0 approves while instance 1 replaces the requirement; each gets a head start of a
      // head start in turn (a tenth of a second, or none), so that both orders happen.
      const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const [approval, change] = await Promise.allSettled([
        later(round % 2 === 0 ? 0 : 5).then(() =>
          two.apps[0]!.prompts.decideRelease(owner, asked.body.data.id, { approve: true }),
        ),
        later(round % 2 === 0 ? 100 : 0).then(() =>
          two.apps[1]!.prompts.configureLabel(owner, "staging", {
            required_evaluation: requirement(round % 2 === 0 ? 0.99 : 1) as never,
          }),
        ),
      ]);
      expect(change.status).toBe("fulfilled");
      const staging = await two.call(0, "GET", "/api/v2/prompts/bot?version=staging&guard=false");
      const entries = (await two.call(0, "GET", "/api/v2/audit?limit=100")).body.data.entries as any[];
      // Last written first (ids follow the order rows were written): the change and the gate's decision.
      const audit = [...entries].sort((a, b) => Number(b.id) - Number(a.id));
      const changedAt = audit.findIndex((e) => e.action === "label.requirement_changed");
      const decided = audit.findIndex((e) => e.action.startsWith("gate.") && e.after === version);
      if (approval.status === "fulfilled") {
        expect(staging.body.data?.version).toBe(version);
        expect(audit[decided].action).toBe("gate.passed");
        // The move committed before the change: its decision is older in the trail.
        expect(decided).toBeGreaterThan(changedAt);
        outcomes.push("moved, then changed");
      } else {
        expect([round, (approval.reason as Error).message]).toEqual([
          round,
          expect.stringContaining("evaluated against an earlier requirement"),
        ]);
        expect(staging.body.data?.version).not.toBe(version);
        expect(audit[decided].action).toBe("gate.refused");
        expect(decided).toBeLessThan(changedAt);
        outcomes.push("changed, then refused");
      }
    }
    expect(outcomes).toHaveLength(ROUNDS);
    // Both orders were exercised.
    expect(new Set(outcomes)).toEqual(new Set(["moved, then changed", "changed, then refused"]));
  });
});
