import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CliResult, cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { listeningApp } from "../support/listening-app.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";

/**
 * `promptstore eval` (docs/git.md, "Evaluating in CI"): the working tree's prompt files evaluated on the server
 * against production, in a scratch directory outside the project, by the real binary over HTTP, on both
 * databases. The stand-in answers each case with the prompt's Role section in capitals, so every verdict is
 * known: production "You help {{ customer }}." answers "YOU HELP ADA." for Ada.
 */

const CASES = [
  { vars: { customer: "Ada" }, expected: "YOU HELP ADA." },
  { vars: { customer: "Bob" }, expected: "YOU ASSIST BOB." },
  { vars: { customer: "Cy" }, expected: "YOU HELP CY.", tags: ["vip"] },
  { vars: { customer: "Dee" }, expected: "nothing like it" },
];
const CHECKS = [{ type: "expected" }, { type: "contains", name: "says you", value: "YOU" }];
const FILE = (role: string) => `---\nid: support\nname: Support\n---\n\n# Role\n\n${role}\n`;

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-eval-"));
  dirs.push(dir);
  return dir;
}

const count = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].length;

/** The attributes of the first element named `name`. */
function attributesOf(xml: string, name: string): Record<string, string> {
  const tag = new RegExp(`<${name}((?:\\s+[a-z_]+="[^"]*")*)\\s*/?>`).exec(xml)?.[1] ?? "";
  return Object.fromEntries([...tag.matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

const SLOW = { timeout: 180_000 };

describe.each(DATABASES)("promptstore eval ($name)", SLOW, (database) => {
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
    closers.push(() => standIn.close());
    // The Role section of the system prompt (between the guard's text and the rest), in capitals.
    standIn.on("caps", {
      kind: "compute",
      answer: (body: Record<string, any>) => ({
        content: (/<Role>\n([\s\S]*?)\n<\/Role>/.exec(String(body.messages[0].content))?.[1] ?? "").toUpperCase(),
      }),
    });
  });

  async function setUp() {
    const app = await listeningApp(database, { config: { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true } });
    closers.push(() => app.close());
    const connection = (
      await app.app.connections.create(
        { projectId: app.caller.projectId, operator: true },
        { name: "Stand-in", base_url: standIn.baseUrl, api_key: standIn.apiKey, models: ["caps"] },
      )
    ).id;
    const created = await app.call("POST", "/api/v2/prompts", {
      id: "support",
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      publish: true,
    });
    expect(created.status).toBe(201);
    const dataset = await app.call("POST", "/api/v2/datasets", { name: "customers", cases: CASES });
    expect(dataset.status).toBe(201);
    const dir = tempDir();
    const checks = join(dir, "..", `${dir.split("/").pop()}-checks.json`);
    writeFileSync(checks, JSON.stringify(CHECKS));
    dirs.push(checks);
    const ps = (args: string[], key = app.key): Promise<CliResult> =>
      cli("", args, { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: key, NO_COLOR: "1" });
    const pulled = await ps(["pull", dir]);
    expect(pulled.code).toBe(0);
    return {
      app,
      connection,
      dir,
      checks,
      production: created.body.data.version as string,
      dataset: dataset.body.data as { id: string; version: string },
      ps,
      flags: ["--dataset", "customers", "--checks", checks, "--connection", connection, "--model", "caps"],
    };
  }

  it("a failing change exits 1 with exact JUnit XML; the same run again is answered by the server from what it kept", async () => {
    const { dir, ps, flags, production, dataset } = await setUp();
    writeFileSync(join(dir, "support.md"), FILE("You assist {{ customer }}."));
    const junit = join(dir, "..", `${dir.split("/").pop()}-junit.xml`);
    dirs.push(junit);

    const first = await ps(["eval", dir, ...flags, "--junit", junit, "--json"]);
    expect(first.code).toBe(1);
    expect(first.stderr.split("\n").filter((l) => l.startsWith("error:") || l.startsWith("{"))).toEqual([
      '{"error":"thresholds failed for 1 prompt(s): support"}',
    ]);
    const report = JSON.parse(first.stdout);
    const [result] = report.prompts;
    expect(report.ok).toBe(false);
    expect(report.skipped).toEqual([]);
    expect(result).toMatchObject({
      id: "support",
      file: "support.md",
      status: "done",
      reused: false,
      against: { ref: "production", version: production },
      dataset: { id: dataset.id, name: "customers", version: dataset.version, cases: 4 },
      source: "the flags",
      regressions: 2,
      ok: false,
    });
    expect(result.versions.map((v: any) => [v.ref, v.passed, v.failed, v.errored, v.pass_rate, v.checks])).toEqual([
      ["production", 2, 2, 0, 0.5, { expected: { passed: 2, judged: 4 }, "says you": { passed: 4, judged: 4 } }],
      ["draft", 1, 3, 0, 0.25, { expected: { passed: 1, judged: 4 }, "says you": { passed: 4, judged: 4 } }],
    ]);
    expect(result.regression_cases.map((c: any) => [c.position, c.vars.customer, c.reasons])).toEqual([
      [0, "Ada", ['expected: differs at character 5: expected "YOU HELP ADA.", got "YOU ASSIST ADA."']],
      [2, "Cy", ['expected: differs at character 5: expected "YOU HELP CY.", got "YOU ASSIST CY."']],
    ]);
    expect(result.thresholds).toEqual([{ name: "every case passes", required: "4/4", actual: "1/4", ok: false }]);
    // 4 cases × 2 versions, each asked once.
    expect(standIn.requests).toHaveLength(8);

    // The JUnit file: one suite, one case per dataset case, a failure per failing case (the regressions named).
    const xml = readFileSync(junit, "utf8");
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')).toBe(true);
    expect(attributesOf(xml, "testsuites")).toMatchObject({ tests: "4", failures: "3", errors: "0", skipped: "0" });
    expect(attributesOf(xml, "testsuite")).toMatchObject({
      name: "support",
      id: "0",
      tests: "4",
      failures: "3",
      errors: "0",
      skipped: "0",
    });
    expect(count(xml, /<testcase /g)).toBe(4);
    expect(count(xml, /<failure /g)).toBe(3);
    expect(count(xml, /<failure [^>]*type="regression"/g)).toBe(2);
    expect(xml).toContain(
      '<testcase name="#1 {&quot;customer&quot;:&quot;Bob&quot;}" classname="promptstore.support" time="',
    );
    expect(xml).toMatch(/<testcase name="#1 [^>]*"\/>\n/);
    expect(xml).toContain(
      '<failure message="regression (passes on production): expected: differs at character 5: expected &quot;YOU HELP ADA.&quot;, got &quot;YOU ASSIST ADA.&quot;" type="regression">',
    );
    expect(xml).toContain(`<property name="against" value="production ${production}"/>`);
    expect(xml.endsWith("  </testsuite>\n</testsuites>\n")).toBe(true);

    // Again: the server answers from what it kept; the stand-in hears nothing. The human report this time.
    const second = await ps(["eval", dir, ...flags, "--junit", junit]);
    expect(second.code).toBe(1);
    expect(standIn.requests).toHaveLength(8);
    expect(second.stderr).toBe("error: thresholds failed for 1 prompt(s): support\n");
    const local = JSON.parse((await ps(["status", dir, "--offline", "--json"])).stdout).prompts[0].local as string;
    const lines = second.stdout.split("\n");
    expect(lines[0]).toBe(
      `support.md (support): draft ${local.slice(0, 12)} against production ${production.slice(0, 12)}`,
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^  dataset customers ${dataset.version.slice(0, 12)} \\(4 cases\\), settings from the flags; evaluation ev_[0-9a-f]{24} \\(reused: nothing was sent to the model\\)$`,
      ),
    );
    expect(lines.slice(2)).toEqual([
      "               production      draft",
      "  pass rate      2/4  50%   1/4  25%",
      "    expected     2/4  50%   1/4  25%",
      "    says you     4/4 100%   4/4 100%",
      "  errored               0          0",
      "  regressions: 2 (cases that pass on production and fail on the draft)",
      '    #0 {"customer":"Ada"}: expected: differs at character 5: expected "YOU HELP ADA.", got "YOU ASSIST ADA."',
      '    #2 {"customer":"Cy"}: expected: differs at character 5: expected "YOU HELP CY.", got "YOU ASSIST CY."',
      "  FAIL  every case passes: 1/4 (needs 4/4)",
      "",
      "1 prompt(s) evaluated: 0 passed, 1 failed",
      "",
    ]);
    expect(
      readFileSync(junit, "utf8").replace(/time="[^"]*"|timestamp="[^"]*"|ev_[0-9a-f]{24}|"(true|false)"/g, ""),
    ).toBe(xml.replace(/time="[^"]*"|timestamp="[^"]*"|ev_[0-9a-f]{24}|"(true|false)"/g, ""));

    // A lower bar: the same evaluation (reused again), and this time every threshold holds.
    const lenient = await ps(["eval", dir, ...flags, "--min-pass-rate", "0.25"]);
    expect([lenient.code, lenient.stderr]).toEqual([0, ""]);
    expect(lenient.stdout).toContain("  ok    pass rate: 0.25 (needs >= 0.25)\n");
    expect(standIn.requests).toHaveLength(8);

    // A dataset file edited and not pushed is not what is evaluated: the server's is, and a note says so.
    const datasetFile = join(dir, "datasets", "customers.jsonl");
    writeFileSync(datasetFile, `${readFileSync(datasetFile, "utf8")}{"vars":{"customer":"Eve"}}\n`);
    const noted = await ps(["eval", dir, ...flags, "--min-pass-rate", "0.25"]);
    expect([noted.code, noted.stderr]).toEqual([
      0,
      `note: datasets/customers.jsonl is not the server's "customers" evaluated (${dataset.version.slice(0, 12)}): the evaluation uses the server's; push the file to evaluate with its cases\n`,
    ]);
    expect(standIn.requests).toHaveLength(8);
  });

  it("a passing change exits 0; an unchanged file is not evaluated; errored cells are JUnit errors", async () => {
    const { dir, ps, checks, connection } = await setUp();
    // Unchanged: the file is production's version, so nothing is asked of anyone.
    const same = await ps(["eval", dir, "--dataset", "customers", "--checks", checks, "--connection", connection]);
    expect([same.code, same.stderr]).toEqual([0, ""]);
    expect(same.stdout).toMatch(
      /^not evaluated: support\.md \(support\): unchanged: the file is production's version [0-9a-f]{12}\nnothing to evaluate\n$/,
    );
    expect(standIn.requests).toHaveLength(0);

    writeFileSync(join(dir, "support.md"), FILE("You gladly help {{ customer }}."));
    // A prompt the server does not have yet is not evaluated, and does not fail the run.
    writeFileSync(join(dir, "fresh.md"), "---\nid: fresh\nname: Fresh\n---\n\n# Role\n\nHi.\n");
    writeFileSync(
      checks,
      JSON.stringify({
        checks: [
          { type: "contains", name: "says you", value: "YOU" },
          { type: "max_chars", value: 40 },
        ],
      }),
    );
    const junit = join(dir, "..", `${dir.split("/").pop()}-pass.xml`);
    dirs.push(junit);
    const passing = await ps([
      "eval",
      dir,
      "--prompt",
      "support",
      "--dataset",
      "customers",
      "--checks",
      checks,
      "--connection",
      connection,
      "--model",
      "caps",
      "--concurrency",
      "2",
      "--junit",
      junit,
    ]);
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain("  ok    every case passes: 4/4 (needs 4/4)\n");
    expect(passing.stdout).toContain("  regressions: 0 (cases that pass on production and fail on the draft)\n");
    expect(passing.stdout.endsWith("1 prompt(s) evaluated: 1 passed, 0 failed\n")).toBe(true);
    const all = await ps([
      "eval",
      dir,
      "--dataset",
      "customers",
      "--checks",
      checks,
      "--connection",
      connection,
      "--model",
      "caps",
    ]);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(
      "\nnot evaluated: fresh.md (fresh): not on the server yet: push creates it, then it can be evaluated\n1 prompt(s) evaluated: 1 passed, 0 failed\n",
    );
    // The draft's 4 answers are new; production's 4 were asked too (another check set, no answers kept yet).
    expect(standIn.requests).toHaveLength(8);
    const xml = readFileSync(junit, "utf8");
    expect(attributesOf(xml, "testsuite")).toMatchObject({ tests: "4", failures: "0", errors: "0", skipped: "0" });
    expect(count(xml, /<testcase [^>]*\/>/g)).toBe(4);

    // A check that cannot decide (json_schema with no schema anywhere) errors every case: <error>, not <failure>.
    writeFileSync(checks, JSON.stringify([{ type: "json_schema" }]));
    const errored = await ps([
      "eval",
      dir,
      "--dataset",
      "customers",
      "--checks",
      checks,
      "--connection",
      connection,
      "--model",
      "caps",
      "--junit",
      junit,
      "--json",
    ]);
    expect(errored.code).toBe(1);
    // Kept answers are judged again by the new set: no model call.
    expect(standIn.requests).toHaveLength(8);
    const report = JSON.parse(errored.stdout).prompts[0];
    expect(report.versions.map((v: any) => [v.ref, v.passed, v.failed, v.errored])).toEqual([
      ["production", 0, 0, 4],
      ["draft", 0, 0, 4],
    ]);
    const errors = readFileSync(junit, "utf8");
    expect(attributesOf(errors, "testsuites")).toMatchObject({ tests: "4", failures: "0", errors: "4", skipped: "0" });
    expect(count(errors, /<error message="json_schema: json_schema: no schema: [^"]*" type="check_error">/g)).toBe(4);
    expect(errors).toContain("\n\nanswer:\nYOU GLADLY HELP ADA.</error>\n");
  });

  it("usage mistakes, missing settings and the server's refusals exit 2, naming what is wrong; nothing starts", async () => {
    const { app, dir, ps, checks, connection, flags } = await setUp();
    writeFileSync(join(dir, "support.md"), FILE("You assist {{ customer }}."));
    const cases: [string[], string][] = [
      [["eval", dir, "--bogus"], "error: unknown option --bogus\n"],
      [["eval"], "error: usage: promptstore eval <dir> [options]\n"],
      [["eval", dir, ...flags, "--concurrency", "0"], "error: --concurrency: must be a whole number from 1 to 32\n"],
      [
        ["eval", dir, ...flags, "--min-pass-rate", "95"],
        "error: --min-pass-rate: must be a number from 0 to 1 (0.95 is 95%)\n",
      ],
      [
        ["eval", dir, ...flags, "--against", "abcdef1"],
        "error: --against <hash>: a version hash belongs to one prompt; name it with --prompt <id>\n",
      ],
      [
        ["eval", dir, ...flags, "--against", "Not A Label"],
        'error: --against: "Not A Label" is not production, latest, a label or a version hash\n',
      ],
      [["eval", dir, ...flags, "--prompt", "nope"], `error: --prompt: no prompt file in ${dir} has the id "nope"\n`],
      [
        ["eval", dir, "--checks", join(dir, "missing.json")],
        `error: --checks ${join(dir, "missing.json")}: no such file\n`,
      ],
      [
        ["eval", dir, "--dataset", "nope", "--checks", checks, "--connection", connection],
        'error: --dataset: no dataset named "nope" in the key\'s project (nor is it a ds_… id)\n',
      ],
      [
        ["eval", dir, "--checks", checks],
        "error: nothing was started: support (support.md): needs a dataset (--dataset, or the prompt's default dataset), a connection (--connection con_…). production has no required evaluation; see promptstore eval --help\n",
      ],
      [
        ["eval", join(dir, "nowhere")],
        `error: ${join(dir, "nowhere")} holds no prompt files (*.md with front matter)\n`,
      ],
    ];
    for (const [args, stderr] of cases) {
      const res = await ps(args);
      expect([args.slice(2).join(" "), res.code, res.stderr]).toEqual([args.slice(2).join(" "), 2, stderr]);
    }

    // The server's refusals: a connection it does not have; a read key (evaluating spends money: write).
    const unknown = await ps([
      "eval",
      dir,
      "--dataset",
      "customers",
      "--checks",
      checks,
      "--connection",
      "con_000000000000000000000000",
      "--model",
      "caps",
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^error: support \(support\.md\): the server refused the evaluation: 404 connection con_0{24} not found\n$/,
    );
    const read = (await app.app.tenants.createApiKey(app.caller.projectId, { scope: "read" })).key;
    const refused = await ps(["eval", dir, ...flags], read);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: support \(support\.md\): the server refused the evaluation: 403 .*write/);
    // A read key reads: pull and status work with it.
    expect((await ps(["status", dir], read)).code).toBe(0);
    expect(standIn.requests).toHaveLength(0);
    // An unreachable server is a 2 as well.
    const down = await cli("", ["eval", dir, ...flags], {
      PROMPTSTORE_URL: "http://127.0.0.1:9",
      PROMPTSTORE_API_KEY: app.key,
    });
    expect(down.code).toBe(2);
  });

  it("uses the label's required evaluation, run through the label's own route so that its gate counts it", async () => {
    const { app, dir, connection, dataset } = await setUp();
    const requirement = {
      dataset: dataset.id,
      checks: CHECKS,
      connection,
      model: { name: "caps" },
      min_pass_rate: 0.5,
      min_check_pass_rates: { "says you": 1 },
      no_regression: true,
    };
    const staged = await app.call("POST", "/api/v2/prompts/support/publish", { label: "staging", version: "latest" });
    expect(staged.status).toBe(200);
    const owner = { ...app.caller, actor: "user:owner@example.com", role: "owner" as const };
    await app.app.prompts.configureLabel(owner, "staging", { required_evaluation: requirement as never });

    writeFileSync(join(dir, "support.md"), FILE("You assist {{ customer }}."));
    const res = await cli("", ["eval", dir, "--against", "staging", "--checks", "/nowhere.json", "--json"], {
      PROMPTSTORE_URL: app.url,
      PROMPTSTORE_API_KEY: app.key,
    });
    expect(res.code).toBe(1);
    // Progress lines aside (eval: support 8/8 …), the note and the verdict.
    expect(res.stderr.split("\n").filter((l) => !l.startsWith("eval: "))).toEqual([
      "note: staging has a required evaluation: its dataset, checks, connection, model and thresholds are used; --checks ignored",
      '{"error":"thresholds failed for 1 prompt(s): support"}',
      "",
    ]);
    const [result] = JSON.parse(res.stdout).prompts;
    expect(result.source).toBe("staging's required evaluation");
    expect(result.against.ref).toBe("staging");
    expect(result.thresholds).toEqual([
      { name: "pass rate", required: ">= 0.5", actual: "0.25", ok: false },
      { name: 'check "says you"', required: ">= 1", actual: "1", ok: true },
      { name: "no regression", required: "0", actual: "2", ok: false },
    ]);
    expect(standIn.requests).toHaveLength(8);
    // Run for the label: the label's gate finds it (failed, as the thresholds said).
    const listed = await app.call("GET", "/api/v2/prompts/support/evaluations");
    expect(listed.body.data.evaluations.map((e: any) => e.required_by)).toEqual(["staging"]);
  });
});
