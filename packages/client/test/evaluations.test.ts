/**
 * Datasets and evaluations through the client, against the real server binary on both databases and the
 * OpenAI stand-in answering the system prompt in capitals (a connection added with `promptstore connection
 * add`, as an operator would): every verdict is known exactly.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { cli, cliJson } from "../../server/test/support/binary.js";
import { type StandIn, startStandIn } from "../../server/test/support/openai-stand-in.js";
import { type DatasetCaseInput, type EvaluationProgress, type Promptstore, PromptstoreError } from "../src/index.js";
import { DATABASES, UNLIMITED, useFixture } from "./support/harness.js";

const HASH = /^[0-9a-f]{64}$/;

/** The stand-in's model `name` answers the system prompt it was sent, in capitals (as the server's tests' `capitals`). */
function capitals(standIn: StandIn, name: string, extra: Record<string, unknown> = {}): void {
  standIn.on(name, {
    kind: "compute",
    answer: (body: Record<string, any>) => ({ content: String(body.messages[0].content).toUpperCase() }),
    ...extra,
  });
}

/** Ada and Cy regress on "assist", Bob improves, Dee fails on both. */
const CASES: DatasetCaseInput[] = [
  { vars: { customer: "Ada" }, expected: "<ROLE>\nYOU HELP ADA.\n</ROLE>" },
  { vars: { customer: "Bob" }, expected: "<ROLE>\nYOU ASSIST BOB.\n</ROLE>" },
  { vars: { customer: "Cy" }, expected: "<ROLE>\nYOU HELP CY.\n</ROLE>", tags: ["vip"] },
  { vars: { customer: "Dee" }, expected: "nothing like it" },
];
const CHECKS = [{ type: "expected" as const }, { type: "contains" as const, name: "says you", value: "YOU" }];

describe.each(DATABASES)("datasets and evaluations through the client ($name)", (database) => {
  const fx = useFixture(database);
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    capitals(standIn, "caps");
    capitals(standIn, "slow", { firstDelayMs: 400 });
  });
  afterEach(async () => {
    await standIn.close();
  });

  /** A server that may call the stand-in on 127.0.0.1, a client, and a connection of its project to the stand-in. */
  async function setUp(): Promise<{ client: Promptstore; url: string; connection: string; projectId: string }> {
    const server = await fx.start({ ...UNLIMITED, PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" });
    const client = fx.client({ baseUrl: server.url, mode: "none" });
    const { project } = await client.list();
    // The provider's key from an environment variable, never the command line.
    const res = await cli(
      fx.databaseUrl,
      [
        "connection",
        "add",
        project.id,
        "--name",
        "Stand-in",
        "--base-url",
        standIn.baseUrl,
        "--api-key-env",
        "STAND_IN_KEY",
        "--model",
        "caps",
        "--json",
      ],
      { STAND_IN_KEY: standIn.apiKey, PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" },
    );
    expect(res.stderr).toBe("");
    const added = JSON.parse(res.stdout);
    expect(added.id).toMatch(/^con_[0-9a-f]{24}$/);
    return { client, url: server.url, connection: added.id, projectId: project.id };
  }

  /** The prompt `support`: production "You help {{ customer }}.", latest "You assist {{ customer }}.". */
  async function twoVersions(client: Promptstore) {
    const production = await client.create({
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      publish: true,
    });
    const latest = await client.save("support", {
      sections: [{ title: "Role", content: "You assist {{ customer }}." }],
    });
    return { production: production.version, latest: latest.version };
  }

  test("datasets: create, get, list, append, replace, versions, cases page by page, rename, export, import JSONL and CSV, delete", async () => {
    const { client } = await setUp();
    const created = await client.datasets.create({ name: "Customers", description: "tier 1", cases: CASES });
    expect(created).toEqual({ id: created.id, name: "Customers", version: created.version, cases: 4 });
    expect(created.id).toMatch(/^ds_[0-9a-f]{24}$/);
    expect(created.version).toMatch(HASH);

    const read = await client.datasets.get(created.id);
    expect(read).toMatchObject({ id: created.id, name: "Customers", description: "tier 1", head: created.version });
    expect(read).toMatchObject({ version: created.version, cases: 4, parent: null });
    expect((await client.datasets.list()).datasets.map((d) => [d.id, d.version, d.cases])).toEqual([
      [created.id, created.version, 4],
    ]);

    const appended = await client.datasets.append(created.id, { cases: [{ vars: { customer: "Eve" } }] });
    expect(appended).toEqual({ id: created.id, version: appended.version, created: true, cases: 5 });
    const same = await client.datasets.replace(created.id, { cases: CASES, message: "back" });
    expect(same).toEqual({ id: created.id, version: created.version, created: false, cases: 4 });
    const history = await client.datasets.versions(created.id);
    expect(history.head).toBe(created.version);
    expect(history.versions.map((v) => v.version).sort()).toEqual([created.version, appended.version].sort());

    // Pages of 2, held to the version asked for; an older version reads as it was.
    const page = await client.datasets.cases(created.id, { limit: 2 });
    expect(page.cases.map((c) => c.position)).toEqual([0, 1]);
    expect(page.next_after).toBe(1);
    const all = [];
    for await (const entry of client.datasets.casesAll(created.id, { version: appended.version, limit: 2 })) {
      all.push(entry);
    }
    expect(all.map((c) => c.case.vars.customer)).toEqual(["Ada", "Bob", "Cy", "Dee", "Eve"]);
    expect(all[2]?.case).toEqual(CASES[2]);
    expect(all[0]?.id).toMatch(HASH);

    expect(await client.datasets.update(created.id, { name: "Renamed" })).toMatchObject({
      id: created.id,
      name: "Renamed",
      version: created.version,
    });

    const exported = await client.datasets.export(created.id, { version: appended.version.slice(0, 10) });
    expect([exported.version, exported.count]).toEqual([appended.version, 5]);
    const lines = [];
    for await (const c of exported.cases) lines.push(c);
    expect(lines).toEqual([...CASES, { vars: { customer: "Eve" } }]);

    // The export imports back as the same version; a CSV makes a dataset too.
    const jsonl = lines.map((c) => JSON.stringify(c)).join("\n");
    const imported = await client.datasets.import(jsonl, { name: "Imported" });
    expect(imported).toMatchObject({ name: "Imported", version: appended.version, cases: 5 });
    const csv = await client.datasets.import("customer,expected\nAda,hi\nBob,\n", { name: "From CSV", format: "csv" });
    expect(csv.cases).toBe(2);
    const fromCsv = [];
    for await (const entry of client.datasets.casesAll(csv.id)) fromCsv.push(entry.case);
    expect(fromCsv).toEqual([{ vars: { customer: "Ada" }, expected: "hi" }, { vars: { customer: "Bob" } }]);
    const grown = await client.datasets.importInto(csv.id, '{"vars":{"customer":"Cy"}}\n', { mode: "append" });
    expect(grown).toMatchObject({ id: csv.id, created: true, cases: 3 });

    // Refusals are typed errors naming the field.
    const bad = await client.datasets
      .create({ name: "Bad", cases: [{ vars: { customer: "Ada" } }, { vars: { customer: 5 as unknown as string } }] })
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(PromptstoreError);
    expect([(bad as PromptstoreError).status, (bad as PromptstoreError).message]).toEqual([
      400,
      "cases[1].vars.customer: must be a string, not a number",
    ]);
    const badLine = await client.datasets.import('{"vars":{}}\nnot json\n', { name: "Bad file" }).catch((e) => e);
    expect([badLine.status, badLine.message]).toEqual([400, expect.stringMatching(/^line 2: /)]);

    expect(await client.datasets.delete(created.id)).toEqual({ id: created.id, deleted: true });
    const gone = await client.datasets.get(created.id).catch((error: unknown) => error);
    expect((gone as PromptstoreError).status).toBe(404);
  });

  test("evaluations: run, wait (following the progress stream), get, casesAll by class, list; the same again is reused with no provider call", async () => {
    const { client, connection } = await setUp();
    const versions = await twoVersions(client);
    const dataset = await client.datasets.create({ name: "Customers", cases: CASES });
    const body = {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      guard: false,
    };

    const started = await client.evaluations.run("support", body);
    expect(started).toMatchObject({ prompt_id: "support", status: "running", reused: false });
    expect(started.id).toMatch(/^ev_[0-9a-f]{24}$/);

    const progress: EvaluationProgress[] = [];
    const done = await client.evaluations.wait(started.id, { onProgress: (p) => progress.push(p) });
    expect(done.status).toBe("done");
    expect(done.progress).toEqual({ done: 8, total: 8 });
    expect(done.versions.map((v) => [v.ref, v.version, v.passed, v.failed, v.errored, v.pass_rate, v.scores])).toEqual([
      ["production", versions.production, 2, 2, 0, 0.5, { expected: 0.5, "says you": 1 }],
      ["latest", versions.latest, 1, 3, 0, 0.25, { expected: 0.25, "says you": 1 }],
    ]);
    expect(done.compare).toEqual({ regressions: 2, improvements: 1 });
    for (const p of progress) expect(p.progress.total).toBe(8);
    expect(standIn.requests).toHaveLength(8);

    const read = await client.evaluations.get(started.id, { only: "regression" });
    expect(read.status).toBe("done");
    expect(read.cases.items.map((c) => [c.position, c.class])).toEqual([
      [0, "regression"],
      [2, "regression"],
    ]);
    expect(read.cases.items[0]?.results[1]?.answer).toEqual({
      role: "assistant",
      content: "<ROLE>\nYOU ASSIST ADA.\n</ROLE>",
    });
    const page = await client.evaluations.cases(started.id, { limit: 3 });
    expect([page.items.length, page.next]).toEqual([3, 2]);
    const classes = [];
    for await (const c of client.evaluations.casesAll(started.id, { limit: 1 })) classes.push(c.class);
    expect(classes).toEqual(["regression", "improvement", "regression", "failed"]);
    const improvements = [];
    for await (const c of client.evaluations.casesAll(started.id, { only: "improvement" })) improvements.push(c);
    expect(improvements.map((c) => c.case.vars.customer)).toEqual(["Bob"]);

    const again = await client.evaluations.run("support", body);
    expect(again).toMatchObject({ status: "done", reused: true, reused_from: started.id });
    expect(again.versions.map((v) => v.pass_rate)).toEqual([0.5, 0.25]);
    // An ended one: wait answers at once; stop changes nothing.
    expect((await client.evaluations.wait(again.id)).reused).toBe(true);
    expect((await client.evaluations.stop(again.id)).status).toBe("done");
    expect(standIn.requests).toHaveLength(8);

    const list = await client.evaluations.list("support");
    expect(list.evaluations.map((e) => e.id)).toEqual([again.id, started.id]);
  });

  test("evaluations: stop a running one; wait's signal and timeout; a read key is refused run, bad input names the field", async () => {
    const { client, url, connection, projectId } = await setUp();
    await twoVersions(client);
    const dataset = await client.datasets.create({ name: "Customers", cases: CASES });
    const body = {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 1,
    };

    const started = await client.evaluations.run("support", body);
    expect(started.status).toBe("running");
    // A wait that gives up does not stop the evaluation; an aborted one rejects with the signal's reason.
    const gaveUp = await client.evaluations.wait(started.id, { timeoutMs: 50 }).catch((error: unknown) => error);
    expect([(gaveUp as PromptstoreError).code, (gaveUp as PromptstoreError).message]).toEqual([
      "timeout",
      `evaluation ${started.id}: not ended within 50 ms`,
    ]);
    const controller = new AbortController();
    const aborted = client.evaluations.wait(started.id, { signal: controller.signal });
    controller.abort(new Error("enough"));
    await expect(aborted).rejects.toThrow("enough");

    const stopped = await client.evaluations.stop(started.id);
    expect(["running", "stopped"]).toContain(stopped.status);
    const ended = await client.evaluations.wait(started.id);
    expect(ended.status).toBe("stopped");
    const pending = ended.versions.reduce((n, v) => n + v.pending, 0);
    expect(pending).toBeGreaterThan(0);
    expect(ended.versions.reduce((n, v) => n + v.passed + v.failed + v.errored + v.pending, 0)).toBe(8);

    const readKey = (await cliJson(fx.databaseUrl, ["key", "create", projectId, "--scope", "read"])).key as string;
    const reader = fx.client({ baseUrl: url, apiKey: readKey, mode: "none" });
    const refused = await reader.evaluations.run("support", body).catch((error: unknown) => error);
    expect([(refused as PromptstoreError).status, (refused as PromptstoreError).message]).toEqual([
      403,
      "scope: running an evaluation needs a key with scope write or higher; this key has scope read",
    ]);
    expect((await reader.evaluations.get(started.id)).status).toBe("stopped");

    const badField = await client.evaluations.run("support", { ...body, concurrency: 0 }).catch((e: unknown) => e);
    expect([(badField as PromptstoreError).status, (badField as PromptstoreError).message]).toEqual([
      400,
      "concurrency: must be 1 to 32",
    ]);
    const bad = await client.evaluations
      .run("support", { ...body, versions: ["production", "0badc0de"] })
      .catch((error: unknown) => error);
    expect([(bad as PromptstoreError).status, (bad as PromptstoreError).message]).toEqual([
      404,
      "versions[1]: no version of prompt support matches 0badc0de",
    ]);
    const missing = await client.evaluations.wait(`ev_${"0".repeat(24)}`).catch((error: unknown) => error);
    expect([(missing as PromptstoreError).status, (missing as PromptstoreError).message]).toEqual([
      404,
      `evaluation ev_${"0".repeat(24)} not found`,
    ]);
  });

  test("wait follows the stream again when it breaks or the service fails once, and ends with the evaluation", async () => {
    const { client, url, connection } = await setUp();
    await twoVersions(client);
    const dataset = await client.datasets.create({ name: "Customers", cases: CASES });
    const proxy = await fx.proxy(url);
    const through = fx.client({ baseUrl: proxy.url, mode: "none", retryBaseDelayMs: 10 });
    const started = await client.evaluations.run("support", {
      versions: ["production", "latest"],
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "slow" },
      guard: false,
      concurrency: 1,
    });
    const events = `/api/v2/evaluations/${started.id}/events`;
    let broken = false;
    const done = await through.evaluations.wait(started.id, {
      intervalMs: 20,
      onProgress: () => {
        if (broken) return;
        broken = true;
        // The stream breaks as a network failure would, and its next connection is answered 503 once.
        proxy.failNext(1, 503, events);
        proxy.dropStreams();
      },
    });
    expect(done.status).toBe("done");
    expect(done.versions.map((v) => v.pass_rate)).toEqual([0.5, 0.25]);
    expect(proxy.count(events)).toBe(3);
  });
});
