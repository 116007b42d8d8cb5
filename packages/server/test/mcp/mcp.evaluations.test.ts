/**
 * The evaluation tools over MCP, with the SDK's own client over real HTTP, on both databases, against the
 * stand-in answering the system prompt in capitals: list_datasets, run_evaluation, get_evaluation until done
 * with exact pass rates, the reuse rule, a read key refused, and bad input naming its field.
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp, unlimitedCaller } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { capitals, createDataset, twoVersions } from "../support/evaluations.js";
import { connectMcp, ERAS, toolData } from "../support/mcp.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection } from "../support/playground.js";

/** Ada and Cy regress on "assist", Bob improves, Dee fails on both (test/evaluations/evaluations.test.ts). */
const CASES = [
  { vars: { customer: "Ada" }, expected: "<ROLE>\nYOU HELP ADA.\n</ROLE>" },
  { vars: { customer: "Bob" }, expected: "<ROLE>\nYOU ASSIST BOB.\n</ROLE>" },
  { vars: { customer: "Cy" }, expected: "<ROLE>\nYOU HELP CY.\n</ROLE>", tags: ["vip"] },
  { vars: { customer: "Dee" }, expected: "nothing like it" },
];
const CHECKS = [{ type: "expected" }, { type: "contains", name: "says you", value: "YOU" }];

describe.each(DATABASES)("MCP evaluation tools ($name)", (database) => {
  let t: TestApp;
  let url: string;
  let standIn: StandIn;
  const clients: Client[] = [];
  beforeEach(async () => {
    t = await testApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
    await unlimitedCaller(t);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    standIn = await startStandIn();
    capitals(standIn);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
    await standIn.close();
  });

  const connect = async (key = t.key, era: (typeof ERAS)[number] = "2025") => {
    const client = await connectMcp(url, key, era);
    clients.push(client);
    return client;
  };
  const caller = (client: Client) => async (name: string, args: Record<string, unknown>) =>
    toolData(await client.callTool({ name, arguments: args }));

  async function setUp() {
    const connection = await standInConnection(t, standIn);
    const versions = await twoVersions(t);
    const dataset = await createDataset(t, "customers", CASES);
    const body = {
      id: "support",
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      guard: false,
    };
    return { connection, versions, dataset, body };
  }

  /** get_evaluation until it has ended. */
  async function ended(call: ReturnType<typeof caller>, id: string): Promise<any> {
    let data: any;
    await expect
      .poll(
        async () => {
          data = (await call("get_evaluation", { id })).data;
          return data?.status;
        },
        { timeout: 30_000, interval: 50 },
      )
      .not.toBe("running");
    return data;
  }

  it.each(ERAS)(
    "protocol %s: list_datasets, run_evaluation, get_evaluation until done: exact counts, pass rates, scores and classes; the same again is reused with no provider call",
    async (era) => {
      const { versions, dataset, body } = await setUp();
      const call = caller(await connect(t.key, era));

      const listed = await call("list_datasets", {});
      expect(listed.data.datasets.map((d: any) => [d.id, d.name, d.version, d.cases])).toEqual([
        [dataset.id, "customers", dataset.version, 4],
      ]);

      const started = await call("run_evaluation", body);
      expect(started.error).toBeUndefined();
      expect(started.data).toMatchObject({ prompt_id: "support", status: "running", reused: false });
      expect(started.data.id).toMatch(/^ev_[0-9a-f]{24}$/);

      const view = await ended(call, started.data.id);
      expect(view.status).toBe("done");
      expect(view.progress).toEqual({ done: 8, total: 8 });
      expect(
        view.versions.map((v: any) => [v.ref, v.version, v.passed, v.failed, v.errored, v.pass_rate, v.scores]),
      ).toEqual([
        ["production", versions.production, 2, 2, 0, 0.5, { expected: 0.5, "says you": 1 }],
        ["latest", versions.latest, 1, 3, 0, 0.25, { expected: 0.25, "says you": 1 }],
      ]);
      expect(view.compare).toEqual({ regressions: 2, improvements: 1 });
      expect(view.cases.items.map((c: any) => [c.position, c.class])).toEqual([
        [0, "regression"],
        [1, "improvement"],
        [2, "regression"],
        [3, "failed"],
      ]);
      expect(view.cases.items[0].results[1].answer).toEqual({
        role: "assistant",
        content: "<ROLE>\nYOU ASSIST ADA.\n</ROLE>",
      });
      expect(standIn.requests).toHaveLength(8);

      const regressions = await call("get_evaluation", { id: view.id, only: "regression" });
      expect(regressions.data.cases.items.map((c: any) => c.position)).toEqual([0, 2]);
      const first = await call("get_evaluation", { id: view.id, limit: 3 });
      expect(first.data.cases.next).toBe(2);
      const rest = await call("get_evaluation", { id: view.id, after: 2, limit: 3 });
      expect(rest.data.cases).toMatchObject({ next: null });
      expect(rest.data.cases.items.map((c: any) => c.position)).toEqual([3]);

      const again = await call("run_evaluation", body);
      expect(again.data).toMatchObject({ status: "done", reused: true, reused_from: view.id });
      expect(again.data.versions.map((v: any) => v.pass_rate)).toEqual([0.5, 0.25]);
      expect(standIn.requests).toHaveLength(8);
    },
  );

  it("a read key lists datasets and reads evaluations, and is refused run_evaluation before anything is sent", async () => {
    const { body } = await setUp();
    const read = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const asRead = caller(await connect(read));
    expect((await asRead("list_datasets", {})).data.datasets).toHaveLength(1);
    expect(await asRead("run_evaluation", body)).toEqual({
      error: "scope: running an evaluation needs a key with scope write or higher; this key has scope read",
    });
    expect(standIn.requests).toHaveLength(0);
    expect((await t.request("GET", "/api/v2/prompts/support/evaluations")).body.data.evaluations).toEqual([]);

    const started = await caller(await connect())("run_evaluation", body);
    const view = await ended(asRead, started.data.id);
    expect(view.versions.map((v: any) => v.pass_rate)).toEqual([0.5, 0.25]);
  });

  it("bad input names the field, as REST does; refusals of the service name theirs", async () => {
    const { body, dataset } = await setUp();
    const call = caller(await connect());
    const invalid = (field: string, message: string) =>
      `Input validation error: Invalid arguments for tool ${field}: ${message}`;

    expect(await call("run_evaluation", { ...body, versions: ["production", 5] })).toEqual({
      error: invalid(
        "run_evaluation",
        "versions[1]: must be a version reference (a hash, a prefix, latest or a label) or { draft }",
      ),
    });
    expect(await call("run_evaluation", { ...body, dataset: "customers" })).toEqual({
      error: invalid("run_evaluation", "dataset: must be a dataset id (ds_…), optionally with @<version>"),
    });
    expect(await call("run_evaluation", { ...body, concurrency: 33 })).toEqual({
      error: invalid("run_evaluation", "concurrency: must be 1 to 32"),
    });
    const { id: _id, ...withoutId } = body;
    expect((await call("run_evaluation", withoutId)).error).toMatch(
      /^Input validation error: Invalid arguments for tool run_evaluation: id: /,
    );
    expect(await call("get_evaluation", { id: "ev_nope" })).toEqual({
      error: invalid("get_evaluation", "id: must be an evaluation id (ev_ and 24 hex characters)"),
    });
    expect(await call("get_evaluation", { id: `ev_${"0".repeat(24)}`, limit: 500 })).toEqual({
      error: invalid("get_evaluation", "limit: must be a whole number from 1 to 200"),
    });
    expect(await call("list_datasets", { extra: 1 })).toMatchObject({
      error: expect.stringMatching(/^Input validation error: Invalid arguments for tool list_datasets: /),
    });

    // What only the service can tell, as tool errors naming the field.
    expect(await call("run_evaluation", { ...body, versions: ["production", "0badc0de"] })).toEqual({
      error: "versions[1]: no version of prompt support matches 0badc0de",
    });
    expect(await call("run_evaluation", { ...body, dataset: `ds_${"0".repeat(24)}` })).toEqual({
      error: `dataset: ds_${"0".repeat(24)} not found`,
    });
    expect(await call("run_evaluation", { ...body, dataset: `${dataset.id}@${"e".repeat(12)}` })).toEqual({
      error: `dataset: no version of dataset ${dataset.id} matches eeeeeeeeeeee`,
    });
    expect(await call("run_evaluation", { ...body, id: "nobody" })).toEqual({ error: "prompt nobody not found" });
    expect(await call("get_evaluation", { id: `ev_${"0".repeat(24)}` })).toEqual({
      error: `evaluation ev_${"0".repeat(24)} not found`,
    });
    expect(standIn.requests).toHaveLength(0);
  });
});
