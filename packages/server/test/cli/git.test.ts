import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, type CliResult, cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";

/**
 * Prompts in git, end to end: the real `promptstore` binary talking over HTTP to a real server (an app
 * listening on a loopback port) on SQLite and PostgreSQL.
 */

const EDGE_SECTIONS = [
  { title: "Role", content: "You help customers of {{ company }}.  \nTwo trailing spaces above stay." },
  { title: "Q&A: why? (v2)! — «ok» #1", content: "Punctuation in the title." },
  { title: "Examples", content: "```md\n# not a heading\n## nor this\n```\n\n## A real sub-heading\nText after." },
  { title: "Internal", content: "Disabled: stored, hashed, never served.", enabled: false },
  { title: "Unicode ✓", content: "日本語のテキスト, émoji 🎉, and a tab\there." },
  { title: "Examples", content: "A second section with a repeated title, disabled.", enabled: false },
];
const TOOLS = [
  {
    type: "function",
    function: {
      name: "lookup_order",
      description: "Finds an order",
      parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
  },
];

const EXPECTED_EDGE_FILE = `---
id: support-bot
name: Support Bot
description: "First-line support: polite, brief"
disabled:
  - Internal
  - title: Examples
    occurrence: 2
tools:
  - type: function
    function:
      name: lookup_order
      description: Finds an order
      parameters:
        type: object
        properties:
          id:
            type: string
        required:
          - id
---

# Role

You help customers of {{ company }}.  
Two trailing spaces above stay.

# Q&A: why? (v2)! — «ok» #1

Punctuation in the title.

# Examples

\`\`\`md
# not a heading
## nor this
\`\`\`

## A real sub-heading
Text after.

# Internal

Disabled: stored, hashed, never served.

# Unicode ✓

日本語のテキスト, émoji 🎉, and a tab\there.

# Examples

A second section with a repeated title, disabled.
`;

const run = promisify(execFile);
const dirs: string[] = [];
const apps: ListeningApp[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const app of apps.splice(0)) await app.close();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-git-"));
  dirs.push(dir);
  return dir;
}

async function server(database: (typeof DATABASES)[number]): Promise<ListeningApp> {
  const app = await listeningApp(database);
  apps.push(app);
  return app;
}

/** The binary with the server's URL and key in the environment, as a CI job would run it. */
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
const filesOf = (dir: string) =>
  Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), "utf8")]));

async function seedEdgeCases(app: ListeningApp): Promise<{ edge: string; plain: string; exotic: string }> {
  const edge = await app.call("POST", "/api/v2/prompts", {
    id: "support-bot",
    name: "Support Bot",
    description: "First-line support: polite, brief",
    sections: EDGE_SECTIONS,
    tools: TOOLS,
    publish: true,
  });
  const plain = await app.call("POST", "/api/v2/prompts", {
    id: "summarizer",
    name: "Summarizer",
    markdown: "# Task\nSummarize {{ text }}.",
  });
  // Content Markdown cannot hold exactly: leading blank lines, a top-level heading inside the content.
  const exotic = await app.call("POST", "/api/v2/prompts", {
    id: "exotic",
    name: "Exotic",
    sections: [
      { title: "Lead", content: "\n\nstarts after two blank lines" },
      { title: "Inner", content: "text\n# a top-level heading inside the content" },
    ],
  });
  expect([edge.status, plain.status, exotic.status]).toEqual([201, 201, 201]);
  return { edge: edge.body.data.version, plain: plain.body.data.version, exotic: exotic.body.data.version };
}

// Each test runs the binary a dozen times or more, each a new Node process: on a loaded machine (the whole
// suite beside it) one test can take longer than the suite's default 30 s.
const SLOW = { timeout: 120_000 };

describe.each(DATABASES)("promptstore pull/status/diff/push/check ($name)", SLOW, (database) => {
  it("pull, edit, status, diff, push, then the new version is read over HTTP", async () => {
    const app = await server(database);
    const seeded = await seedEdgeCases(app);
    const dir = tempDir();

    const pulled = await psJson(app, ["pull", dir]);
    expect(pulled.prompts.map((p: any) => [p.id, p.result])).toEqual([
      ["support-bot", "written"],
      ["summarizer", "written"],
      ["exotic", "written"],
    ]);
    expect(readFileSync(join(dir, "support-bot.md"), "utf8")).toBe(EXPECTED_EDGE_FILE);
    expect(readLock(dir)).toEqual({
      lockfile_version: 1,
      prompts: {
        exotic: {
          file: "exotic.md",
          hash: seeded.exotic,
          production: null,
          latest: seeded.exotic,
          name: "Exotic",
          description: "",
        },
        summarizer: {
          file: "summarizer.md",
          hash: seeded.plain,
          production: null,
          latest: seeded.plain,
          name: "Summarizer",
          description: "",
        },
        "support-bot": {
          file: "support-bot.md",
          hash: seeded.edge,
          production: seeded.edge,
          latest: seeded.edge,
          name: "Support Bot",
          description: "First-line support: polite, brief",
        },
      },
    });
    // What Markdown cannot say exactly is kept in the front matter instead.
    expect(readFileSync(join(dir, "exotic.md"), "utf8")).toContain("sections:\n  - title: Lead\n");

    const clean = await psJson(app, ["status", dir]);
    expect(clean.prompts.map((p: any) => p.state)).toEqual(["unchanged", "unchanged", "unchanged"]);

    const path = join(dir, "support-bot.md");
    writeFileSync(path, readFileSync(path, "utf8").replace("You help customers", "You gladly help customers"));
    const offline = await psJson(app, ["status", dir, "--offline"]);
    expect(offline.prompts.map((p: any) => [p.id, p.state])).toEqual([
      ["exotic", "unchanged"],
      ["summarizer", "unchanged"],
      ["support-bot", "changed locally"],
    ]);
    expect(offline.prompts[2].server).toBeNull();
    const changed = await ps(app, ["status", dir]);
    expect(changed.stdout).toBe(
      [
        "  exotic.md                        unchanged",
        "  summarizer.md                    unchanged",
        "M support-bot.md                   changed locally",
        "",
      ].join("\n"),
    );

    const shown = await ps(app, ["diff", dir]);
    expect(shown.code).toBe(0);
    const localHash = offline.prompts[2].local as string;
    expect(shown.stdout).toBe(
      [
        `support-bot.md (support-bot): server latest ${seeded.edge.slice(0, 12)} → file ${localHash.slice(0, 12)}`,
        '  changed section 1 "Role"',
        "    @@ -1,2 +1,2 @@",
        "    -You help customers of {{ company }}.  ",
        "    +You gladly help customers of {{ company }}.  ",
        "     Two trailing spaces above stay.",
        "",
      ].join("\n"),
    );
    expect(shown.stdout).not.toContain("\u001b[");
    // On a terminal (a pseudo-terminal through script(1)) the same diff is coloured.
    const terminalEnv: NodeJS.ProcessEnv = { ...process.env, PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key };
    delete terminalEnv.NO_COLOR;
    const onTerminal = await run("script", ["-qec", `${process.execPath} ${BIN} diff ${dir}`, "/dev/null"], {
      env: terminalEnv,
    });
    expect(onTerminal.stdout).toContain("\u001b[31m-You help customers of {{ company }}.  \u001b[39m");
    expect(onTerminal.stdout).toContain("\u001b[32m+You gladly help customers of {{ company }}.  \u001b[39m");
    // NO_COLOR asks a terminal for plain text.
    const noColour = await run("script", ["-qec", `${process.execPath} ${BIN} diff ${dir}`, "/dev/null"], {
      env: { ...terminalEnv, NO_COLOR: "1" },
    });
    expect(noColour.stdout).toContain("-You help customers of {{ company }}.  ");
    expect(noColour.stdout).not.toContain("\u001b[");

    const pushed = await psJson(app, ["push", dir, "--message", "gladly"]);
    expect(pushed.prompts).toEqual([
      { id: "exotic", file: "exotic.md", result: "unchanged", version: seeded.exotic, published: false },
      { id: "summarizer", file: "summarizer.md", result: "unchanged", version: seeded.plain, published: false },
      { id: "support-bot", file: "support-bot.md", result: "saved", version: localHash, published: false },
    ]);
    const read = await app.call("GET", "/api/v2/prompts/support-bot?version=latest&guard=false");
    expect(read.body.data.version).toBe(localHash);
    expect(read.body.data.sections[0].content).toBe(
      "You gladly help customers of {{ company }}.  \nTwo trailing spaces above stay.",
    );
    expect(read.body.data.production_version).toBe(seeded.edge);
    const history = await app.call("GET", "/api/v2/prompts/support-bot/versions");
    expect(history.body.data.versions.map((v: any) => [v.version, v.message])).toEqual([
      [localHash, "gladly"],
      [seeded.edge, null],
    ]);
    expect(readLock(dir).prompts["support-bot"]).toMatchObject({
      hash: localHash,
      latest: localHash,
      production: seeded.edge,
    });
    expect((await psJson(app, ["status", dir])).prompts.map((p: any) => p.state)).toEqual([
      "unchanged",
      "unchanged",
      "unchanged",
    ]);

    // A new file is created, and --publish makes it production.
    writeFileSync(
      join(dir, "greeter.md"),
      "---\nid: greeter\nname: Greeter\n---\n\n# Greeting\n\nSay hello to {{ name }}.\n",
    );
    expect((await psJson(app, ["status", dir])).prompts.find((p: any) => p.id === "greeter").state).toBe("new");
    const created = await ps(app, ["push", dir, "--publish"]);
    expect(created.code).toBe(0);
    const greeter = await app.call("GET", "/api/v2/prompts/greeter?guard=false");
    expect(greeter.body.data).toMatchObject({
      label: "production",
      prompt: "<Greeting>\nSay hello to {{ name }}.\n</Greeting>",
    });
    expect(created.stdout).toContain(`created   greeter.md  ${greeter.body.data.version.slice(0, 12)}  published\n`);
    // --publish makes every file production: the new one, and those the server held unpublished.
    expect(created.stdout).toContain(`unchanged exotic.md  ${seeded.exotic.slice(0, 12)}  published\n`);
    expect(created.stdout).toContain("1 created, 0 saved, 3 unchanged, 4 published\n");
    expect((await ps(app, ["check", dir])).code).toBe(0);
  });

  it("round trip: pull then push makes no version; push into an empty project and pull again gives identical files and hashes", async () => {
    const source = await server(database);
    await seedEdgeCases(source);
    const first = tempDir();
    await psJson(source, ["pull", first]);
    const again = await psJson(source, ["push", first]);
    expect(again.prompts.map((p: any) => p.result)).toEqual(["unchanged", "unchanged", "unchanged"]);
    for (const id of ["support-bot", "summarizer", "exotic"]) {
      expect((await source.call("GET", `/api/v2/prompts/${id}/versions`)).body.data.versions).toHaveLength(1);
    }

    const target = await server(database);
    const copy = tempDir();
    for (const name of readdirSync(first).filter((n) => n.endsWith(".md"))) {
      writeFileSync(join(copy, name), readFileSync(join(first, name)));
    }
    const created = await psJson(target, ["push", copy, "--publish"]);
    expect(created.prompts.map((p: any) => p.result)).toEqual(["created", "created", "created"]);
    const second = tempDir();
    await psJson(target, ["pull", second]);
    const { "promptstore.lock": lockA, ...filesA } = filesOf(first);
    const { "promptstore.lock": lockB, ...filesB } = filesOf(second);
    expect(filesB).toEqual(filesA);
    const hashes = (lock: string) =>
      Object.fromEntries(
        Object.entries(JSON.parse(lock).prompts).map(([id, e]: [string, any]) => [id, [e.hash, e.latest]]),
      );
    expect(hashes(lockB as string)).toEqual(hashes(lockA as string));
    const sourceList = (await source.call("GET", "/api/v2/prompts")).body.data.prompts;
    const targetList = (await target.call("GET", "/api/v2/prompts")).body.data.prompts;
    expect(targetList.map((p: any) => [p.id, p.latest_version]).sort()).toEqual(
      sourceList.map((p: any) => [p.id, p.latest_version]).sort(),
    );
  });

  it("push refuses, naming the prompt, when latest moved on the server since the lock; --force saves", async () => {
    const app = await server(database);
    const seeded = await seedEdgeCases(app);
    const dir = tempDir();
    await psJson(app, ["pull", dir]);
    const path = join(dir, "summarizer.md");
    writeFileSync(path, readFileSync(path, "utf8").replace("Summarize {{", "Briefly summarize {{"));
    const elsewhere = await app.call("PUT", "/api/v2/prompts/summarizer", {
      markdown: "# Task\nSummarize {{ text }} well.",
    });
    expect(elsewhere.body.data.created).toBe(true);

    const status = await psJson(app, ["status", dir]);
    expect(status.prompts.find((p: any) => p.id === "summarizer").state).toBe("changed locally and on server");
    const refused = await ps(app, ["push", dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: push refused, nothing was sent: summarizer (summarizer.md): latest moved on the server since the lock (${seeded.plain.slice(0, 12)} → ${elsewhere.body.data.version.slice(0, 12)}). Pull first, or push --force to save over it\n`,
    );
    expect((await app.call("GET", "/api/v2/prompts/summarizer/versions")).body.data.versions).toHaveLength(2);
    expect(readLock(dir).prompts.summarizer.latest).toBe(seeded.plain);

    // Pull does not overwrite the edit either.
    const pullRefused = await ps(app, ["pull", dir]);
    expect(pullRefused.code).toBe(1);
    expect(pullRefused.stderr).toContain("summarizer.md (changed locally and on server)");

    const forced = await psJson(app, ["push", dir, "--force"]);
    expect(forced.prompts.find((p: any) => p.id === "summarizer").result).toBe("saved");
    const latest = await app.call("GET", "/api/v2/prompts/summarizer?version=latest&guard=false");
    expect(latest.body.data.prompt).toBe("<Task>\nBriefly summarize {{ text }}.\n</Task>");
  });

  it("push --publish does not put back what production served before a publish from elsewhere; a prompt deleted on the server is not recreated", async () => {
    const app = await server(database);
    const seeded = await seedEdgeCases(app);
    const dir = tempDir();
    await psJson(app, ["pull", dir]);
    // Someone publishes a newer support-bot from the dashboard; the file still holds the older one.
    const newer = await app.call("PUT", "/api/v2/prompts/support-bot", {
      markdown: "# Role\nA newer role.",
      publish: true,
    });
    expect(newer.body.data.published).toBe(true);
    const status = await psJson(app, ["status", dir]);
    expect(status.prompts.find((p: any) => p.id === "support-bot").state).toBe("changed on server");

    // Without --publish an unedited file sends nothing, and is no conflict.
    const plain = await psJson(app, ["push", dir]);
    expect(plain.prompts.find((p: any) => p.id === "support-bot")).toEqual({
      id: "support-bot",
      file: "support-bot.md",
      result: "unchanged",
      version: seeded.edge,
      published: false,
    });
    const refused = await ps(app, ["push", dir, "--publish"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: push refused, nothing was sent: support-bot (support-bot.md): production moved on the server since the lock (${seeded.edge.slice(0, 12)} → ${newer.body.data.version.slice(0, 12)}); publishing the file would replace it. Pull first, or push --force to save over it\n`,
    );
    const production = async () => (await app.call("GET", "/api/v2/prompts/support-bot")).body.data.version;
    expect(await production()).toBe(newer.body.data.version);

    // A prompt deleted on the server since the lock: an unedited file does not bring it back.
    expect((await app.call("DELETE", "/api/v2/prompts/summarizer")).status).toBe(200);
    const deleted = await ps(app, ["push", dir]);
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toBe(
      "error: push refused, nothing was sent: summarizer (summarizer.md): deleted on the server since the lock. Pull first, or push --force to save over it\n",
    );
    expect((await app.call("GET", "/api/v2/prompts/summarizer")).status).toBe(404);

    // --force is the explicit choice: the file's version goes back to production, the prompt is created again.
    const forced = await psJson(app, ["push", dir, "--publish", "--force"]);
    expect(forced.prompts.find((p: any) => p.id === "support-bot")).toMatchObject({
      result: "unchanged",
      version: seeded.edge,
      published: true,
    });
    expect(forced.prompts.find((p: any) => p.id === "summarizer")).toMatchObject({
      result: "created",
      version: seeded.plain,
    });
    expect(await production()).toBe(seeded.edge);
  });

  it("check passes while production matches the lockfile and fails after a publish from elsewhere", async () => {
    const app = await server(database);
    const seeded = await seedEdgeCases(app);
    const dir = tempDir();
    await psJson(app, ["pull", dir]);
    const ok = await ps(app, ["check", dir]);
    expect(ok).toEqual({ code: 0, stdout: "production matches promptstore.lock\n", stderr: "" });

    const saved = await app.call("PUT", "/api/v2/prompts/summarizer", {
      markdown: "# Task\nSummarize {{ text }} in French.",
      publish: true,
    });
    const failed = await ps(app, ["check", dir]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe(
      `summarizer: production on the server is ${saved.body.data.version.slice(0, 12)}, the lockfile says unpublished\n`,
    );
    expect(failed.stderr).toBe("error: production differs from promptstore.lock for 1 prompt(s)\n");
    const json = await ps(app, ["check", dir, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      differences: [{ id: "summarizer", lock: null, server: saved.body.data.version }],
    });

    // A rollback to what the lock says makes it pass again.
    await app.call("POST", "/api/v2/prompts/support-bot/publish", { version: seeded.edge });
    expect((await ps(app, ["check", dir])).code).toBe(1);
    await psJson(app, ["pull", dir]);
    expect((await ps(app, ["check", dir])).code).toBe(0);
  });

  it("names the file and field of a broken prompt file, and needs a URL and key", async () => {
    const app = await server(database);
    const dir = tempDir();
    writeFileSync(join(dir, "bad.md"), "---\nid: Bad Id\nname: x\n---\n# T\nc\n");
    const bad = await ps(app, ["status", dir, "--offline"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      "error: bad.md: id: must be 1-64 characters of a-z, 0-9, _ or -, starting with a letter or digit\n",
    );
    writeFileSync(join(dir, "bad.md"), "---\nid: ok\nname: x\n---\nno heading\n");
    expect((await ps(app, ["status", dir, "--offline"])).stderr).toBe(
      "error: bad.md: markdown: must contain at least one level-1 heading (# Title) to start a section\n",
    );
    // An empty project into a directory that does not exist yet: the directory and an empty lockfile.
    const fresh = join(tempDir(), "new", "prompts");
    expect(await psJson(app, ["pull", fresh])).toEqual({ prompts: [] });
    expect(readLock(fresh)).toEqual({ lockfile_version: 1, prompts: {} });
    const missing = await cli("", ["pull", dir], { PROMPTSTORE_URL: "", PROMPTSTORE_API_KEY: "" });
    expect(missing.stderr).toBe("error: --url or PROMPTSTORE_URL is required: the server to talk to\n");
  });
});

describe.each(DATABASES)("promptstore export/import ($name)", SLOW, (database) => {
  it("moves every prompt with every version to another server: hashes, messages, times; production only when asked", async () => {
    const source = await server(database);
    await seedEdgeCases(source);
    await source.call("PUT", "/api/v2/prompts/summarizer", { markdown: "# Task\nv2 {{ text }}", message: "second" });
    await source.call("PUT", "/api/v2/prompts/summarizer", { markdown: "# Task\nv3 {{ text }}", message: "third" });
    await source.call("POST", "/api/v2/prompts/summarizer/publish", {});
    await source.call("PUT", "/api/v2/prompts/support-bot", { sections: [{ title: "Only", content: "draft" }] });
    const file = join(tempDir(), "bundle.json");
    const exported = await psJson(source, ["export", file]);
    expect(exported).toEqual({ file, prompts: 3, versions: 6 });

    const target = await server(database);
    const state = async (app: ListeningApp) => {
      const list = (await app.call("GET", "/api/v2/prompts")).body.data.prompts;
      return Promise.all(
        list.map(async (p: any) => ({
          id: p.id,
          name: p.name,
          description: p.description,
          created_at: p.created_at,
          history: (await app.call("GET", `/api/v2/prompts/${p.id}/versions`)).body.data,
        })),
      );
    };
    const first = await psJson(target, ["import", file]);
    expect(first.prompts.map((p: any) => [p.id, p.created, p.versions_created, p.published])).toEqual([
      ["support-bot", true, 2, false],
      ["summarizer", true, 3, false],
      ["exotic", true, 1, false],
    ]);
    const expected = await state(source);
    // Unpublished: no production, so no production among the labels either.
    const withoutProduction = ({ production: _, ...labels }: Record<string, string>) => labels;
    const unpublished = expected.map((p: any) => ({
      ...p,
      history: {
        ...p.history,
        production_version: null,
        labels: withoutProduction(p.history.labels),
        versions: p.history.versions.map((v: any) => ({ ...v, labels: withoutProduction(v.labels) })),
      },
    }));
    expect(await state(target)).toEqual(unpublished);

    const twice = await psJson(target, ["import", file]);
    expect(twice.prompts.map((p: any) => [p.versions_created, p.published])).toEqual([
      [0, false],
      [0, false],
      [0, false],
    ]);
    const published = await ps(target, ["import", file, "--publish-as-source"]);
    expect(published.code).toBe(0);
    expect(published.stdout).toContain("3 prompts: 0 created, 0 versions added, 2 published\n");
    expect(await state(target)).toEqual(expected);
    for (const p of expected) {
      const id = p.id as string;
      const a = (await source.call("GET", `/api/v2/prompts/${id}?guard=false`)).body.data;
      const b = (await target.call("GET", `/api/v2/prompts/${id}?guard=false`)).body.data;
      expect({ ...b, updated_at: null }).toEqual({ ...a, updated_at: null });
    }
  });

  it("writes the prompts in list order though it reads several at once, each with all its versions", async () => {
    const source = await server(database);
    // Prompts of 1 to 6 versions: their reads end out of order, the bundle keeps the list's.
    const ids: string[] = [];
    for (let n = 0; n < 20; n++) {
      const id = `prompt-${String(n).padStart(2, "0")}`;
      ids.push(id);
      await source.app.prompts.create(source.caller, { id, name: `Prompt ${n}`, markdown: `# Body\nv0 of ${n}` });
      for (let v = 1; v < 6 - (n % 6); v++) {
        await source.app.prompts.save(source.caller, id, { markdown: `# Body\nv${v} of ${n}`, message: `v${v}` });
      }
    }
    const file = join(tempDir(), "bundle.json");
    expect(await psJson(source, ["export", file])).toEqual({ file, prompts: 20, versions: 74 });
    const bundle = JSON.parse(readFileSync(file, "utf8"));
    expect(bundle.prompts.map((p: { id: string }) => p.id)).toEqual(ids);
    expect(bundle.prompts.map((p: { versions: unknown[] }) => p.versions.length)).toEqual(
      ids.map((_, n) => 6 - (n % 6)),
    );
  });

  it("sends a prompt with more versions than one request holds in several, latest and production first", async () => {
    const source = await server(database);
    // 110 small versions and 20 of 60 000 characters: split both by count (100) and by size (the 1 MiB body).
    for (let n = 0; n < 130; n++) {
      const content = n < 110 ? `version ${n}` : `version ${n} ${"x".repeat(60_000)}`;
      const body = { sections: [{ title: "Body", content }], message: `v${n}` };
      if (n === 0) await source.app.prompts.create(source.caller, { id: "long", name: "Long", ...body });
      else await source.app.prompts.save(source.caller, "long", { ...body, publish: n === 5 });
    }
    const file = join(tempDir(), "bundle.json");
    expect(await psJson(source, ["export", file])).toEqual({ file, prompts: 1, versions: 130 });
    const target = await server(database);
    const imported = await psJson(target, ["import", file, "--publish-as-source"]);
    expect(imported.prompts).toEqual([
      expect.objectContaining({
        id: "long",
        created: true,
        versions_created: 130,
        versions_existing: 0,
        published: true,
      }),
    ]);
    const history = async (app: ListeningApp) => (await app.call("GET", "/api/v2/prompts/long/versions")).body.data;
    expect(await history(target)).toEqual(await history(source));
    expect((await history(target)).versions).toHaveLength(130);
  });

  it("refuses a bundle whose content does not match its hashes, before sending anything", async () => {
    const source = await server(database);
    await seedEdgeCases(source);
    const file = join(tempDir(), "bundle.json");
    await psJson(source, ["export", file]);
    writeFileSync(file, readFileSync(file, "utf8").replace("Punctuation in the title.", "Tampered."));
    const target = await server(database);
    const res = await ps(target, ["import", file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error: .*bundle\.json: support-bot: version [0-9a-f]{64} does not match its content\n$/,
    );
    expect((await target.call("GET", "/api/v2/prompts")).body.data.prompts).toEqual([]);
  });
});
