/**
 * The clients as a user gets them (issue 20): installed from a running server's /sdk/ into scratch projects
 * outside the repository, with the exact commands the README gives, then reading a prompt. Also from a clone,
 * and the README's CI guard, run as written. SQLite only: what is tested is the packaging, not the store.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BIN, type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const clientVersion = JSON.parse(readFileSync(join(REPO, "packages/client/package.json"), "utf8")).version;
const pythonVersion = readFileSync(join(REPO, "clients/python/pyproject.toml"), "utf8").match(
  /^version = "(.+)"/m,
)?.[1];

/** Runs a command in a shell, as a user types it; never fails the promise, the test reads the exit code. */
async function sh(command: string, cwd: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run("sh", ["-c", command], {
      cwd,
      env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false", ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

const READ_TS = `import { Promptstore } from "@promptstore/client";
const client = new Promptstore({ baseUrl: process.env.PROMPTSTORE_URL, apiKey: process.env.PROMPTSTORE_API_KEY });
const prompt = await client.get("support-bot");
console.log(client.fill(prompt, { company: "Acme" }));
client.close();
`;

const READ_PY = `import os
from promptstore import Promptstore
with Promptstore(base_url=os.environ["PROMPTSTORE_URL"], api_key=os.environ["PROMPTSTORE_API_KEY"]) as client:
    prompt = client.get("support-bot")
    print(client.fill(prompt, {"company": "Acme"}))
`;

const sqlite = DATABASES.filter((d) => d.name === "sqlite");

describe.each(sqlite)("sdk: the clients installed from a running server ($name)", (database) => {
  let server: RunningServer;
  let drop = async () => {};
  let scratch = "";
  let env: Record<string, string> = {};

  beforeAll(async () => {
    const created = await database.create();
    drop = created.drop;
    server = await startServer(created.url, { PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const key = server.events.find((e) => e.event === "bootstrap")?.key.key as string;
    env = { PROMPTSTORE_URL: server.url, PROMPTSTORE_API_KEY: key };
    const res = await fetch(`${server.url}/api/v2/prompts`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        name: "Support Bot",
        sections: [{ title: "Role", content: "You help customers of {{ company }}." }],
        publish: true,
      }),
    });
    expect(res.status).toBe(201);
    scratch = mkdtempSync(join(tmpdir(), "promptstore-install-"));
    expect(scratch.startsWith(REPO)).toBe(false);
  });

  afterAll(async () => {
    await server?.stop("SIGKILL");
    await drop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const listing = async () => {
    const res = await fetch(`${server.url}/sdk/`);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).toContain('\n  "clients": [');
    return JSON.parse(text) as { clients: { language: string; version: string; file: string; install: string }[] };
  };

  test("GET /sdk/ lists both clients with their versions and this server's install commands", async () => {
    const { clients } = await listing();
    expect(clients.map((c) => [c.language, c.version])).toEqual([
      ["typescript", clientVersion],
      ["python", pythonVersion],
    ]);
    expect(clients[0]?.install).toBe(`npm install ${server.url}/sdk/promptstore-client-${clientVersion}.tgz`);
    expect(clients[1]?.install).toBe(`pip install ${server.url}/sdk/promptstore-${pythonVersion}-py3-none-any.whl`);
    expect((await fetch(`${server.url}/sdk/../package.json`)).status).toBe(404);
  });

  test("npm install http://HOST/sdk/<file>.tgz into a new project, then a read", { timeout: 120_000 }, async () => {
    const [ts] = (await listing()).clients;
    const app = join(scratch, "ts-app");
    mkdirSync(app);
    expect((await sh("npm init -y", app)).code).toBe(0);
    const installed = await sh(ts?.install as string, app);
    expect(installed.stderr).not.toMatch(/ERR!/);
    expect(installed.code).toBe(0);
    writeFileSync(join(app, "read.mjs"), READ_TS);
    const read = await sh("node read.mjs", app, env);
    expect(read.stderr).toBe("");
    expect(read.stdout).toContain("You help customers of Acme.");
    const pkg = JSON.parse(readFileSync(join(app, "node_modules/@promptstore/client/package.json"), "utf8"));
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(join(app, "node_modules/@promptstore/client/LICENSE"), "utf8")).toMatch(/^MIT License/);
  });

  test("python3 -m venv, pip install http://HOST/sdk/<file>.whl (no index), then a read", {
    timeout: 120_000,
  }, async () => {
    const [, py] = (await listing()).clients;
    const app = join(scratch, "py-app");
    mkdirSync(app);
    expect((await sh("python3 -m venv .venv", app)).code).toBe(0);
    const installed = await sh(
      `.venv/bin/${String(py?.install).replace("pip install", "pip install --no-index")}`,
      app,
    );
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(0);
    writeFileSync(join(app, "read.py"), READ_PY);
    const read = await sh(".venv/bin/python read.py", app, env);
    expect(read.stderr).toBe("");
    expect(read.stdout).toContain("You help customers of Acme.");
    const license = await sh(
      `.venv/bin/python -c "import importlib.metadata as m; print(m.metadata('promptstore')['License'])"`,
      app,
    );
    expect(license.stdout.trim()).toBe("MIT");
  });

  test("from a clone: npm install <clone>/packages/client and pip install <clone>/clients/python", {
    timeout: 120_000,
  }, async () => {
    const app = join(scratch, "clone-app");
    mkdirSync(app);
    expect((await sh("npm init -y", app)).code).toBe(0);
    expect((await sh(`npm install ${join(REPO, "packages/client")}`, app)).code).toBe(0);
    writeFileSync(join(app, "read.mjs"), READ_TS);
    expect((await sh("node read.mjs", app, env)).stdout).toContain("You help customers of Acme.");
    expect((await sh("python3 -m venv .venv", app)).code).toBe(0);
    const pip = await sh(`.venv/bin/pip install --no-index ${join(REPO, "clients/python")}`, app);
    expect(pip.stderr).toBe("");
    expect(pip.code).toBe(0);
    writeFileSync(join(app, "read.py"), READ_PY);
    expect((await sh(".venv/bin/python read.py", app, env)).stdout).toContain("You help customers of Acme.");
  });

  test("the README's CI guard, run as written from an app's repository", { timeout: 120_000 }, async () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const recipe = readme.slice(readme.indexOf("**Guard production from CI**"));
    const line = recipe.match(/^ {6}- run: (.*promptstore-check.*)$/m)?.[1] as string;
    expect(line).toContain("/sdk/promptstore-client.tgz");
    const repo = join(scratch, "app-repo");
    mkdirSync(repo);
    // The developer's pull made prompts/ and its lockfile; CI has only the checkout.
    const pulled = await sh(`node ${BIN} pull prompts/`, repo, env);
    expect(pulled.code).toBe(0);
    const npmCache = join(scratch, "npm-cache");
    const guard = (extra: Record<string, string> = {}) =>
      sh(line, repo, { ...env, npm_config_cache: npmCache, ...extra });
    const clean = await guard();
    expect(clean.stdout, clean.stderr).toContain("production matches promptstore.lock");
    expect(clean.code).toBe(0);
    // Published from the dashboard, not from the repository: the guard fails naming the prompt.
    const published = await fetch(`${env.PROMPTSTORE_URL}/api/v2/prompts/support-bot`, {
      method: "PUT",
      headers: { "x-api-key": env.PROMPTSTORE_API_KEY as string, "content-type": "application/json" },
      body: JSON.stringify({ sections: [{ title: "Role", content: "Changed in the dashboard." }], publish: true }),
    });
    expect(published.status, await published.clone().text()).toBe(200);
    const dirty = await guard();
    expect(dirty.stdout, dirty.stderr).toMatch(
      /^support-bot: production on the server is [0-9a-f]{12}, the lockfile says [0-9a-f]{12}$/m,
    );
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toContain("error: production differs from promptstore.lock for 1 prompt(s)");
  });
});
