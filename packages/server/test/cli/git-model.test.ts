import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentHash } from "@promptstore/core/prompts/hash";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";

/** Model settings in prompt files (front matter `model`), diff, push, export and import, through the binary. */

const MODEL = { name: "gpt-4o", temperature: 0.2, stop: ["END"], response_format: { type: "json_object" as const } };
const SECTIONS = [{ title: "Task", content: "Summarize {{ text }}." }];

const EXPECTED_FILE = `---
id: summarizer
name: Summarizer
model:
  name: gpt-4o
  response_format:
    type: json_object
  stop:
    - END
  temperature: 0.2
---

# Task

Summarize {{ text }}.
`;

const dirs: string[] = [];
const apps: ListeningApp[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const app of apps.splice(0)) await app.close();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-git-model-"));
  dirs.push(dir);
  return dir;
}

async function server(database: (typeof DATABASES)[number]): Promise<ListeningApp> {
  const app = await listeningApp(database);
  apps.push(app);
  return app;
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

describe.each(DATABASES)("model settings in git files and bundles ($name)", (database) => {
  it("pull writes them as front matter; an edit diffs and pushes as a new version; removing them is one too", async () => {
    const app = await server(database);
    const created = await app.call("POST", "/api/v2/prompts", {
      id: "summarizer",
      name: "Summarizer",
      sections: SECTIONS,
      model: MODEL,
    });
    const dir = tempDir();
    await psJson(app, ["pull", dir]);
    const file = join(dir, "summarizer.md");
    expect(readFileSync(file, "utf8")).toBe(EXPECTED_FILE);
    expect(JSON.parse(readFileSync(join(dir, "promptstore.lock"), "utf8")).prompts.summarizer.hash).toBe(
      created.body.data.version,
    );

    writeFileSync(file, EXPECTED_FILE.replace("temperature: 0.2", "temperature: 0.7"));
    const diff = await ps(app, ["diff", dir]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain("  model settings changed\n");
    expect(diff.stdout).toContain('    -  "temperature": 0.2\n    +  "temperature": 0.7');
    const pushed = await psJson(app, ["push", dir]);
    const edited = { ...MODEL, temperature: 0.7 };
    const hash = contentHash({ sections: [{ ...SECTIONS[0]!, enabled: true }], tools: [], model: edited });
    expect(pushed.prompts.map((p: any) => [p.id, p.result, p.version])).toEqual([["summarizer", "saved", hash]]);
    const read = await app.call("GET", "/api/v2/prompts/summarizer?version=latest");
    expect(read.body.data.model).toEqual({
      name: "gpt-4o",
      response_format: { type: "json_object" },
      stop: ["END"],
      temperature: 0.7,
    });

    writeFileSync(file, "---\nid: summarizer\nname: Summarizer\n---\n\n# Task\n\nSummarize {{ text }}.\n");
    const removed = await psJson(app, ["push", dir]);
    expect(removed.prompts[0].version).toBe(contentHash({ sections: [{ ...SECTIONS[0]!, enabled: true }], tools: [] }));
    expect("model" in (await app.call("GET", "/api/v2/prompts/summarizer?version=latest")).body.data).toBe(false);
  });

  it("names the file and field of a bad setting in front matter", async () => {
    const app = await server(database);
    const dir = tempDir();
    await psJson(app, ["pull", dir]);
    writeFileSync(join(dir, "x.md"), "---\nid: x\nname: X\nmodel:\n  name: m\n  seed: 3\n---\n\n# A\n\nb\n");
    const status = await ps(app, ["push", dir]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(
      "x.md: model.seed: is not a known setting; put provider-specific settings in model.extra",
    );
  });

  it("export and import carry every version's settings under the same hash", async () => {
    const source = await server(database);
    const first = await source.call("POST", "/api/v2/prompts", {
      id: "s",
      name: "S",
      sections: SECTIONS,
      model: MODEL,
    });
    await source.call("PUT", "/api/v2/prompts/s", { sections: SECTIONS });
    const file = join(tempDir(), "bundle.json");
    await psJson(source, ["export", file]);
    const bundle = JSON.parse(readFileSync(file, "utf8"));
    expect(bundle.prompts[0].versions.map((v: any) => v.model ?? null)).toEqual([
      { name: "gpt-4o", response_format: { type: "json_object" }, stop: ["END"], temperature: 0.2 },
      null,
    ]);
    const target = await server(database);
    await psJson(target, ["import", file]);
    const read = await target.call("GET", `/api/v2/prompts/s?version=${first.body.data.version}`);
    expect(read.status).toBe(200);
    expect(read.body.data.model).toEqual(bundle.prompts[0].versions[0].model);
  });
});
