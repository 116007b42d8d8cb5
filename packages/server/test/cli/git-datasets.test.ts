import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";

/**
 * Datasets as files in git (docs/git.md, "Datasets"): `pull` writes `datasets/<name>.jsonl` as the server
 * exports it, `push` sends a changed file and makes exactly one version, an unchanged one (byte for byte, or
 * only written differently) none; `status` and `check` see them. The real binary over HTTP, both databases.
 */

const CASES = [
  { vars: { customer: "Ada" }, expected: "YOU HELP ADA." },
  { vars: { customer: "Bob" }, expected: "YOU HELP BOB.", tags: ["vip", "new"] },
  { vars: { customer: "Cy" } },
];

/** The canonical JSON of a case as the server stores and exports it (RFC 8785: keys sorted, no spaces). */
const line = (c: { vars: Record<string, string>; expected?: string; tags?: string[] }) =>
  JSON.stringify({
    ...(c.expected !== undefined ? { expected: c.expected } : {}),
    ...(c.tags ? { tags: [...c.tags].sort() } : {}),
    vars: c.vars,
  });

/** A dataset version's hash, computed here as the docs define it: SHA-256 of the canonical JSON array. */
const versionOf = (cases: Parameters<typeof line>[0][]) =>
  createHash("sha256")
    .update(`[${cases.map(line).join(",")}]`)
    .digest("hex");

const dirs: string[] = [];
const apps: ListeningApp[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const app of apps.splice(0)) await app.close();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-datasets-"));
  dirs.push(dir);
  return dir;
}

function ps(app: ListeningApp, args: string[]): Promise<CliResult> {
  return cli("", args, { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key });
}

async function psJson(app: ListeningApp, args: string[]): Promise<any> {
  const res = await ps(app, [...args, "--json"]);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout);
}

const readLock = (dir: string) => JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8"));

async function versionsOf(app: ListeningApp, id: string): Promise<string[]> {
  const res = await app.call("GET", `/api/v2/datasets/${id}/versions`);
  expect(res.status).toBe(200);
  return res.body.data.versions.map((v: any) => v.version);
}

const SLOW = { timeout: 180_000 };

describe.each(DATABASES)("promptstore pull/push/status/check with datasets ($name)", SLOW, (database) => {
  async function seeded() {
    const app = await listeningApp(database);
    apps.push(app);
    const prompt = await app.call("POST", "/api/v2/prompts", {
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      publish: true,
    });
    expect(prompt.status).toBe(201);
    const created = await app.call("POST", "/api/v2/datasets", { name: "customers", cases: CASES });
    expect(created.status).toBe(201);
    // A name a file system would misread is written %-encoded.
    const odd = await app.call("POST", "/api/v2/datasets", { name: "team/faq: v2", cases: [{ vars: { q: "hi" } }] });
    expect(odd.status).toBe(201);
    return { app, customers: created.body.data as { id: string; version: string }, odd: odd.body.data };
  }

  it("pull writes each dataset as the server exports it; pushed unchanged (even rewritten) makes no version; edited makes one", async () => {
    const { app, customers, odd } = await seeded();
    expect(customers.version).toBe(versionOf(CASES));
    const dir = tempDir();

    const pulled = await psJson(app, ["pull", dir]);
    expect(pulled.datasets).toEqual([
      { name: "customers", file: "datasets/customers.jsonl", result: "written", version: customers.version, cases: 3 },
      {
        name: "team/faq: v2",
        file: "datasets/team%2Ffaq%3A v2.jsonl",
        result: "written",
        version: odd.version,
        cases: 1,
      },
    ]);
    expect(readdirSync(join(dir, "datasets")).sort()).toEqual(["customers.jsonl", "team%2Ffaq%3A v2.jsonl"]);
    const file = join(dir, "datasets", "customers.jsonl");
    expect(readFileSync(file, "utf8")).toBe(`${CASES.map(line).join("\n")}\n`);
    const exported = await fetch(`${app.url}/api/v2/datasets/${customers.id}/export`, {
      headers: { "x-api-key": app.key },
    });
    expect(readFileSync(file, "utf8")).toBe(await exported.text());
    expect(readLock(dir).datasets).toEqual({
      customers: { id: customers.id, file: "datasets/customers.jsonl", version: customers.version, cases: 3 },
      "team/faq: v2": { id: odd.id, file: "datasets/team%2Ffaq%3A v2.jsonl", version: odd.version, cases: 1 },
    });
    // Pulled again: nothing is downloaded or rewritten.
    expect((await psJson(app, ["pull", dir])).datasets.map((d: any) => d.result)).toEqual(["unchanged", "unchanged"]);

    // Pushed as pulled: no request makes a version.
    const same = await psJson(app, ["push", dir]);
    expect(same.datasets).toEqual([
      {
        name: "customers",
        file: "datasets/customers.jsonl",
        result: "unchanged",
        version: customers.version,
        cases: 3,
      },
      {
        name: "team/faq: v2",
        file: "datasets/team%2Ffaq%3A v2.jsonl",
        result: "unchanged",
        version: odd.version,
        cases: 1,
      },
    ]);
    expect(await versionsOf(app, customers.id)).toEqual([customers.version]);

    // Written another way (key order, spaces, a blank line, CRLF, tags repeated and unsorted, an empty list):
    // the same cases, so the same version, and still nothing to push.
    writeFileSync(
      file,
      [
        '{ "vars": { "customer": "Ada" }, "expected": "YOU HELP ADA.", "tags": [] }',
        "",
        '{"tags":["new","vip","new"],"vars":{"customer":"Bob"},"expected":"YOU HELP BOB."}',
        '{"vars":{"customer":"Cy"},"messages":[]}',
        "",
      ].join("\r\n"),
    );
    const status = await psJson(app, ["status", dir]);
    expect(status.datasets.map((d: any) => [d.file, d.state, d.local])).toEqual([
      ["datasets/customers.jsonl", "unchanged", customers.version],
      ["datasets/team%2Ffaq%3A v2.jsonl", "unchanged", odd.version],
    ]);
    expect((await psJson(app, ["push", dir])).datasets[0].result).toBe("unchanged");
    expect(await versionsOf(app, customers.id)).toEqual([customers.version]);

    // Edited: one case changed, one added. Status says so offline; push makes exactly one version, whose hash
    // is the one computed here from the cases.
    const edited = [
      CASES[0],
      { vars: { customer: "Bob" }, expected: "YOU ASSIST BOB." },
      CASES[2],
      { vars: { customer: "Dee" } },
    ] as Parameters<typeof line>[0][];
    writeFileSync(file, `${edited.map((c) => JSON.stringify(c)).join("\n")}\n`);
    const offline = await psJson(app, ["status", dir, "--offline"]);
    expect(offline.datasets[0]).toEqual({
      name: "customers",
      file: "datasets/customers.jsonl",
      state: "changed locally",
      local: versionOf(edited),
      lock: customers.version,
      server: null,
    });
    const human = await ps(app, ["status", dir]);
    expect(human.stdout).toBe(
      [
        "  support.md                       unchanged",
        "M datasets/customers.jsonl         changed locally",
        "  datasets/team%2Ffaq%3A v2.jsonl  unchanged",
        "",
      ].join("\n"),
    );
    const pushed = await ps(app, ["push", dir, "--message", "Bob is assisted"]);
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toContain(`saved     datasets/customers.jsonl  ${versionOf(edited).slice(0, 12)}  4 cases\n`);
    expect(pushed.stdout).toContain("datasets: 0 created, 1 saved, 1 unchanged\n");
    expect(await versionsOf(app, customers.id)).toEqual([versionOf(edited), customers.version]);
    const head = await app.call("GET", `/api/v2/datasets/${customers.id}`);
    expect([head.body.data.version, head.body.data.cases, head.body.data.message]).toEqual([
      versionOf(edited),
      4,
      "Bob is assisted",
    ]);
    expect(readLock(dir).datasets.customers).toEqual({
      id: customers.id,
      file: "datasets/customers.jsonl",
      version: versionOf(edited),
      cases: 4,
    });
    // Pushed again: nothing new.
    expect((await psJson(app, ["push", dir])).datasets[0].result).toBe("unchanged");
    expect(await versionsOf(app, customers.id)).toHaveLength(2);
    expect((await ps(app, ["check", dir])).stdout).toBe(
      "production matches promptstore.lock\ndatasets match promptstore.lock\n",
    );

    // Changed on the server: check fails naming the file; status says so; pull writes the server's cases.
    const moved = await app.call("PUT", `/api/v2/datasets/${customers.id}`, { cases: CASES });
    expect(moved.body.data).toMatchObject({ version: customers.version, created: false });
    const checked = await ps(app, ["check", dir, "--json"]);
    expect(checked.code).toBe(1);
    expect(JSON.parse(checked.stdout)).toEqual({
      ok: false,
      differences: [],
      datasets: [
        { name: "customers", file: "datasets/customers.jsonl", lock: versionOf(edited), server: customers.version },
      ],
    });
    expect(checked.stderr).toBe('{"error":"the server\'s datasets differ from promptstore.lock for 1 dataset(s)"}\n');
    expect((await psJson(app, ["status", dir])).datasets[0].state).toBe("changed on server");
    expect((await psJson(app, ["pull", dir])).datasets[0].result).toBe("written");
    expect(readFileSync(file, "utf8")).toBe(`${CASES.map(line).join("\n")}\n`);
    expect((await ps(app, ["check", dir])).code).toBe(0);
  });

  it("push creates a dataset from a new file; a mistake is named with its line and nothing is sent; both sides changed is refused", async () => {
    const { app, customers } = await seeded();
    const dir = tempDir();
    await psJson(app, ["pull", dir]);

    const fresh = [{ vars: { q: "refund?" }, expected: "Yes." }, { vars: { q: "hours?" } }];
    writeFileSync(join(dir, "datasets", "faq.jsonl"), `${fresh.map((c) => JSON.stringify(c)).join("\n")}\n`);
    expect((await psJson(app, ["status", dir])).datasets.map((d: any) => [d.name, d.state])).toEqual([
      ["customers", "unchanged"],
      ["faq", "new"],
      ["team/faq: v2", "unchanged"],
    ]);
    const created = await psJson(app, ["push", dir]);
    const faq = created.datasets.find((d: any) => d.name === "faq");
    expect(faq).toEqual({
      name: "faq",
      file: "datasets/faq.jsonl",
      result: "created",
      version: versionOf(fresh),
      cases: 2,
    });
    const listed = (await app.call("GET", "/api/v2/datasets")).body.data.datasets;
    const onServer = listed.find((d: any) => d.name === "faq");
    expect([onServer.version, onServer.cases]).toEqual([versionOf(fresh), 2]);
    expect(readLock(dir).datasets.faq).toEqual({
      id: onServer.id,
      file: "datasets/faq.jsonl",
      version: versionOf(fresh),
      cases: 2,
    });

    // A case the server would refuse is refused here, naming the file, the line and the field.
    const customersFile = join(dir, "datasets", "customers.jsonl");
    writeFileSync(customersFile, '{"vars":{"customer":"Ada"}}\n\n{"vars":{"customer":7}}\n');
    const bad = await ps(app, ["push", dir]);
    expect([bad.code, bad.stderr]).toEqual([
      1,
      "error: datasets/customers.jsonl: line 3: vars.customer: must be a string, not a number\n",
    ]);
    writeFileSync(customersFile, '{"vars":{"customer":"Ada"}}\n{"vars": {"customer": "Ada"}}\n');
    expect((await ps(app, ["push", dir])).stderr).toBe(
      "error: datasets/customers.jsonl: line 2: repeats line 1; a case is in a version once\n",
    );
    writeFileSync(customersFile, "{not json\n");
    expect((await ps(app, ["status", dir])).stderr).toBe(
      "error: datasets/customers.jsonl: line 1: is not valid JSON\n",
    );
    expect(await versionsOf(app, customers.id)).toEqual([customers.version]);

    // Changed here and on the server since the lock: push and pull refuse, naming it; nothing changes.
    writeFileSync(customersFile, `${line({ vars: { customer: "Zed" } })}\n`);
    await app.call("PUT", `/api/v2/datasets/${customers.id}`, { cases: [{ vars: { customer: "Other" } }] });
    const refused = await ps(app, ["push", dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: push refused, nothing was sent: datasets\/customers\.jsonl: the dataset changed on the server since the lock \([0-9a-f]{12} → [0-9a-f]{12}\)\. Pull first, or push --force to save over it\n$/,
    );
    const pullRefused = await ps(app, ["pull", dir]);
    expect(pullRefused.stderr).toContain("datasets/customers.jsonl (changed locally and on server)");
    expect(await versionsOf(app, customers.id)).toHaveLength(2);
    // --force saves the file over it.
    const forced = await psJson(app, ["push", dir, "--force"]);
    expect(forced.datasets[0]).toMatchObject({
      name: "customers",
      result: "saved",
      version: versionOf([{ vars: { customer: "Zed" } }]),
    });
    expect(await versionsOf(app, customers.id)).toHaveLength(3);
  });

  it("a dataset of more cases than one request holds goes as a streamed import, created and then replaced", async () => {
    const app = await listeningApp(database);
    apps.push(app);
    const dir = tempDir();
    const cases = Array.from({ length: 1500 }, (_, i) => ({ vars: { n: String(i) }, expected: `answer ${i}` }));
    writeFileSync(join(dir, "seed.md"), "---\nid: seed\nname: Seed\n---\n\n# Role\n\nAnswer {{ n }}.\n");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(dir, "datasets"));
    const file = join(dir, "datasets", "big.jsonl");
    writeFileSync(file, `${cases.map((c) => JSON.stringify(c)).join("\n")}\n`);
    const created = await psJson(app, ["push", dir]);
    expect(created.datasets).toEqual([
      { name: "big", file: "datasets/big.jsonl", result: "created", version: versionOf(cases), cases: 1500 },
    ]);
    const id = readLock(dir).datasets.big.id as string;
    cases[700] = { vars: { n: "700" }, expected: "changed" };
    writeFileSync(file, `${cases.map((c) => JSON.stringify(c)).join("\n")}\n`);
    const replaced = await psJson(app, ["push", dir]);
    expect(replaced.datasets[0]).toEqual({
      name: "big",
      file: "datasets/big.jsonl",
      result: "saved",
      version: versionOf(cases),
      cases: 1500,
    });
    expect(await versionsOf(app, id)).toHaveLength(2);
    expect((await psJson(app, ["push", dir])).datasets[0].result).toBe("unchanged");
    expect(await versionsOf(app, id)).toHaveLength(2);
    // Pulled into another directory, it is the same file the server exports, of the same version.
    const other = tempDir();
    await psJson(app, ["pull", other]);
    expect(readLock(other).datasets.big.version).toBe(versionOf(cases));
    expect(readFileSync(join(other, "datasets", "big.jsonl"), "utf8")).toBe(`${cases.map(line).join("\n")}\n`);
  });
});
