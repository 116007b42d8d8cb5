/**
 * Evaluations on two instances of one PostgreSQL database: one runs an evaluation and the other never runs it
 * too; when the first stops, the second takes it over and goes on from what was kept.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");
const CASES = 40;

describe.runIf(postgres)("evaluations across two instances ('postgres')", () => {
  const two = useTwoInstances(postgres!, {
    PROMPTSTORE_MODEL_ALLOW_PRIVATE: true,
    PROMPTSTORE_EVALUATION_LEASE_SECONDS: 2,
  });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    // 40 ms an answer: the instances' sweeps (every second or so) run many times during an evaluation.
    standIn.on("caps", {
      kind: "compute",
      firstDelayMs: 40,
      answer: (body: any) => ({ content: String(body.messages[0].content).toUpperCase() }),
    });
  });
  afterEach(async () => {
    await standIn.close();
  });

  async function setUp() {
    const list = await two.call(0, "GET", "/api/v2/prompts");
    const projectId = list.body.data.project.id as string;
    const connection = await two.apps[0]!.connections.create(
      { projectId, operator: true },
      { name: "Stand-in", base_url: standIn.baseUrl, api_key: standIn.apiKey, models: ["caps"] },
    );
    const created = await two.call(0, "POST", "/api/v2/prompts", {
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      publish: true,
    });
    expect(created.status).toBe(201);
    const cases = Array.from({ length: CASES }, (_, i) => ({ vars: { customer: `C${i}` } }));
    const dataset = await two.call(1, "POST", "/api/v2/datasets", { name: "many", cases });
    expect(dataset.status).toBe(201);
    return {
      versions: ["production"],
      dataset: dataset.body.data.id,
      checks: [{ type: "contains", value: "YOU HELP" }],
      connection: connection.id,
      model: { name: "caps" },
      guard: false,
      concurrency: 2,
    };
  }

  const systemPrompts = () => standIn.requests.map((r) => String((r.body as any).messages[0].content));

  async function ended(instance: number, id: string) {
    let view: any;
    await expect
      .poll(
        async () => {
          view = (await two.call(instance, "GET", `/api/v2/evaluations/${id}`)).body.data;
          return view.status;
        },
        { timeout: 30_000, interval: 100 },
      )
      .not.toBe("running");
    return view;
  }

  it("one instance runs an evaluation; the other never asks a case of it", async () => {
    const body = await setUp();
    const started = await two.call(1, "POST", "/api/v2/prompts/support/evaluations", body);
    expect([started.status, started.body]).toEqual([202, expect.anything()]);
    const view = await ended(0, started.body.data.id);
    expect(view.status).toBe("done");
    expect(view.versions[0]).toMatchObject({ passed: CASES, failed: 0, errored: 0 });
    // Every case asked exactly once: no instance ran a case the other had.
    expect(systemPrompts()).toHaveLength(CASES);
    expect(new Set(systemPrompts()).size).toBe(CASES);
  });

  it("when its instance stops, the other takes the evaluation over and finishes it from what was kept", async () => {
    const body = await setUp();
    const started = await two.call(0, "POST", "/api/v2/prompts/support/evaluations", body);
    const id = started.body.data.id;
    await expect.poll(() => standIn.requests.length, { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(6);
    // The first instance shuts down: its run stops and lets the lease go.
    const first = two.apps.shift()!;
    two.urls.shift();
    await first.server.close();
    const askedBefore = standIn.requests.length;
    const view = await ended(0, id);
    expect([view.status, view.reason]).toEqual(["done", null]);
    expect(view.versions[0]).toMatchObject({ passed: CASES, failed: 0, errored: 0, pending: 0 });
    // Nothing judged before the handover was asked again: only the cells cut short by the shutdown (at most
    // the concurrency) were asked twice.
    const prompts = systemPrompts();
    expect(new Set(prompts).size).toBe(CASES);
    expect(prompts.length - CASES).toBeLessThanOrEqual(body.concurrency);
    expect(askedBefore).toBeLessThan(CASES);
  });
});
