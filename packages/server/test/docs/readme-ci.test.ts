/**
 * The README's GitHub Actions job for evaluations (issue 39), tested as written: its YAML block is parsed,
 * and each job's `run:` lines run in a scratch git repository outside the project, with the environment the
 * workflow gives them (`${{ vars.* }}` and `${{ secrets.* }}` filled in), against the server's binary and the
 * OpenAI stand-in. `promptstore` is the one the server hands out (`npm install -g $PROMPTSTORE_URL/sdk/…`, the
 * job's own line). SQLite only: what is tested is the recipe, not the store.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parse } from "yaml";
import { cli, type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));

interface Step {
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, unknown>;
  env?: Record<string, string>;
  jobs: Record<string, { if?: string; env?: Record<string, string>; steps: Step[] }>;
}

/** The README's YAML block that runs `promptstore eval`. */
function workflow(): Workflow {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1] as string)
    .find((b) => b.includes("promptstore eval"));
  expect(block).toBeDefined();
  return parse(block as string) as Workflow;
}

async function sh(command: string, cwd: string, env: Record<string, string>) {
  try {
    // GitHub runs a step's lines with `bash -e`.
    const { stdout, stderr } = await run("bash", ["-e", "-c", command], { cwd, env, timeout: 180_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe.each(DATABASES.filter((d) => d.name === "sqlite"))(
  "README: evaluate pull requests, publish on merge ($name)",
  (database) => {
    let server: RunningServer;
    let standIn: StandIn;
    let drop = async () => {};
    let scratch = "";
    let databaseUrl = "";
    let publishKey = "";
    let writeKey = "";
    let connection = "";

    beforeAll(async () => {
      standIn = await startStandIn();
      standIn.on("caps", {
        kind: "compute",
        answer: (body: Record<string, any>) => ({
          content: (/<Role>\n([\s\S]*?)\n<\/Role>/.exec(String(body.messages[0].content))?.[1] ?? "").toUpperCase(),
        }),
      });
      const created = await database.create();
      drop = created.drop;
      databaseUrl = created.url;
      server = await startServer(created.url, {
        PROMPTSTORE_DEFAULT_PLAN: "unlimited",
        PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true",
      });
      const bootstrap = server.events.find((e) => e.event === "bootstrap");
      const project = bootstrap?.project.id as string;
      publishKey = bootstrap?.key.key as string;
      const key = await cli(databaseUrl, ["key", "create", project, "--scope", "write", "--json"]);
      expect(key.code).toBe(0);
      writeKey = JSON.parse(key.stdout).key;
      const added = await cli(
        databaseUrl,
        [
          "connection",
          "add",
          project,
          "--name",
          "Stand-in",
          "--base-url",
          standIn.baseUrl,
          "--api-key-env",
          "STANDIN_KEY",
          "--model",
          "caps",
          "--json",
        ],
        { STANDIN_KEY: standIn.apiKey, PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true" },
      );
      expect([added.code, added.stderr]).toEqual([0, ""]);
      connection = JSON.parse(added.stdout).id;
      const call = async (method: string, path: string, body: unknown) => {
        const res = await fetch(`${server.url}${path}`, {
          method,
          headers: { "x-api-key": publishKey, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(201);
      };
      await call("POST", "/api/v2/prompts", {
        id: "support",
        name: "Support",
        sections: [{ title: "Role", content: "You help {{ customer }}." }],
        publish: true,
      });
      await call("POST", "/api/v2/datasets", {
        name: "customers",
        cases: [{ vars: { customer: "Ada" } }, { vars: { customer: "Bob" } }, { vars: { customer: "Cy" } }],
      });
      scratch = mkdtempSync(join(tmpdir(), "promptstore-readme-ci-"));
      expect(scratch.startsWith(REPO)).toBe(false);
    }, 120_000);

    afterAll(async () => {
      await server?.stop("SIGKILL");
      await standIn?.close();
      await drop();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    test("the pull request's evaluation fails a bad change and passes a good one; the merge publishes to staging", {
      timeout: 600_000,
    }, async () => {
      const flow = workflow();
      expect(Object.keys(flow.on).sort()).toEqual(["pull_request", "push"]);
      const vars: Record<string, string> = { PROMPTSTORE_URL: server.url, PROMPTSTORE_CONNECTION: connection };
      const secrets: Record<string, string> = { PROMPTSTORE_WRITE_KEY: writeKey, PROMPTSTORE_PUBLISH_KEY: publishKey };
      const fill = (env: Record<string, string> | undefined) =>
        Object.fromEntries(
          Object.entries(env ?? {}).map(([k, v]) => [
            k,
            String(v).replace(/\$\{\{\s*(vars|secrets)\.([A-Z_]+)\s*\}\}/g, (_, kind: string, name: string) => {
              const value = (kind === "vars" ? vars : secrets)[name];
              expect(value, `${kind}.${name}`).toBeDefined();
              return value as string;
            }),
          ]),
        );
      const repo = join(scratch, "app");
      const base: Record<string, string> = {
        HOME: scratch,
        // A prefix of its own, so that `npm install -g` never touches the machine's; its bin/ leads PATH, and this
        // repository's node_modules/.bin (whose promptstore is the server's) is not on it.
        PATH: [
          join(scratch, "global", "bin"),
          ...String(process.env.PATH)
            .split(":")
            .filter((d) => !d.includes(REPO)),
        ].join(":"),
        npm_config_prefix: join(scratch, "global"),
        npm_config_cache: join(scratch, "npm-cache"),
        npm_config_audit: "false",
        npm_config_fund: "false",
        NO_COLOR: "1",
        GIT_AUTHOR_NAME: "Dev",
        GIT_AUTHOR_EMAIL: "dev@example.com",
        GIT_COMMITTER_NAME: "Dev",
        GIT_COMMITTER_EMAIL: "dev@example.com",
      };
      const git = (command: string) => sh(command, repo, base);

      /** Runs one job's steps as the runner would: `run:` lines in the repository, `uses:` steps are the runner's. */
      async function runJob(
        name: string,
        sha: string,
      ): Promise<{ step: string; code: number; stdout: string; stderr: string }[]> {
        const job = flow.jobs[name];
        expect(job, name).toBeDefined();
        const results: { step: string; code: number; stdout: string; stderr: string }[] = [];
        let failed = false;
        for (const step of job?.steps ?? []) {
          if (step.uses !== undefined) {
            expect(step.uses).toMatch(/^(actions\/checkout|actions\/setup-node|mikepenz\/action-junit-report)@v\d+$/);
            continue;
          }
          if (failed && step.if !== "always()") continue;
          const env = { ...base, GITHUB_SHA: sha, ...fill(flow.env), ...fill(job?.env), ...fill(step.env) };
          const res = await sh(step.run as string, repo, env);
          results.push({ step: step.run as string, ...res });
          if (res.code !== 0) failed = true;
        }
        return results;
      }

      // The developer's side: the prompts and the dataset pulled into the repository, the check set beside them.
      expect((await sh(`mkdir -p ${repo}`, scratch, base)).code).toBe(0);
      expect((await git("git init -q -b main")).code).toBe(0);
      const install = await sh(`npm install -g "${server.url}/sdk/promptstore-client.tgz"`, repo, base);
      expect(install.code).toBe(0);
      const pulled = await sh("promptstore pull prompts/", repo, {
        ...base,
        PROMPTSTORE_URL: server.url,
        PROMPTSTORE_API_KEY: writeKey,
      });
      expect([pulled.code, pulled.stderr]).toEqual([0, ""]);
      expect(readFileSync(join(repo, "prompts/datasets/customers.jsonl"), "utf8")).toBe(
        '{"vars":{"customer":"Ada"}}\n{"vars":{"customer":"Bob"}}\n{"vars":{"customer":"Cy"}}\n',
      );
      writeFileSync(
        join(repo, "prompts/checks.json"),
        JSON.stringify([
          { type: "contains", name: "says you", value: "YOU" },
          { type: "max_chars", value: 30 },
        ]),
      );
      expect((await git("git add -A && git commit -qm prompts")).code).toBe(0);
      const file = join(repo, "prompts/support.md");
      const role = (text: string) => writeFileSync(file, `---\nid: support\nname: Support\n---\n\n# Role\n\n${text}\n`);

      // A pull request whose change makes every answer too long: the evaluation step fails the job (exit 1),
      // and its JUnit file says which cases failed, and why.
      role("You help {{ customer }} with anything and everything, always.");
      const bad = await runJob("evaluate", "1111111");
      expect(bad.map((r) => r.code)).toEqual([0, 1]);
      expect(bad[1]?.stderr).toContain("error: thresholds failed for 1 prompt(s): support\n");
      expect(bad[1]?.stdout).toContain("  FAIL  every case passes: 0/3 (needs 3/3)\n");
      const xml = readFileSync(join(repo, "evaluation.xml"), "utf8");
      expect(xml).toContain('<testsuite name="support" id="0" tests="3" failures="3" errors="0" skipped="0"');
      expect(xml).toContain(
        '<failure message="regression (passes on production): max_chars: 50 characters, at most 30" type="regression">',
      );
      expect(standIn.requests).toHaveLength(6);

      // Fixed in the same pull request: the step passes. Production's answers were kept: only the draft is asked.
      role("You gladly help {{ customer }}.");
      const good = await runJob("evaluate", "2222222");
      expect(good.map((r) => r.code)).toEqual([0, 0]);
      expect(good[1]?.stdout).toContain("  ok    every case passes: 3/3 (needs 3/3)\n");
      expect(readFileSync(join(repo, "evaluation.xml"), "utf8")).toContain(
        '<testsuite name="support" id="0" tests="3" failures="0" errors="0" skipped="0"',
      );
      expect(standIn.requests).toHaveLength(9);
      // The job run again (a re-run in CI): answered from what the server kept, nothing asked.
      expect((await runJob("evaluate", "2222222")).map((r) => r.code)).toEqual([0, 0]);
      expect(standIn.requests).toHaveLength(9);

      // Merged: the publish job pushes the files and moves staging to the new version.
      expect((await git("git add prompts && git commit -qm 'warmer'")).code).toBe(0);
      const merged = await runJob("publish", "3333333");
      expect(merged.map((r) => r.code)).toEqual([0, 0]);
      const local = JSON.parse((await sh("promptstore status prompts/ --offline --json", repo, base)).stdout).prompts[0]
        .local as string;
      const staging = await fetch(`${server.url}/api/v2/prompts/support?version=staging&guard=false`, {
        headers: { "x-api-key": writeKey },
      });
      const read = ((await staging.json()) as any).data;
      expect([read.version, read.prompt]).toEqual([local, "<Role>\nYou gladly help {{ customer }}.\n</Role>"]);
      const history = await fetch(`${server.url}/api/v2/prompts/support/versions`, {
        headers: { "x-api-key": writeKey },
      });
      expect(((await history.json()) as any).data.versions[0]).toMatchObject({ version: local, message: "3333333" });

      // The next merge, from a checkout whose lockfile is main's (CI never committed the one it wrote): it works.
      expect((await git("git checkout -q -- prompts/promptstore.lock")).code).toBe(0);
      role("You kindly help {{ customer }}.");
      expect((await git("git commit -qam kinder")).code).toBe(0);
      const next = await runJob("publish", "4444444");
      expect(next.map((r) => r.code)).toEqual([0, 0]);
      const after = await fetch(`${server.url}/api/v2/prompts/support?version=staging&guard=false`, {
        headers: { "x-api-key": writeKey },
      });
      expect(((await after.json()) as any).data.prompt).toBe("<Role>\nYou kindly help {{ customer }}.\n</Role>");
    });
  },
);
