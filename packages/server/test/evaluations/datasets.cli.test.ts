/**
 * `promptstore datasets list | import | export` (docs/evaluations.md, "From the command line"): the real
 * binary against a real server over HTTP; files streamed both ways.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BIN } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";
import { jsonl, manyCases, versionHash } from "./dataset-support.js";

const run = promisify(execFile);

describe.each(DATABASES)("promptstore datasets ($name)", (database) => {
  let server: ListeningApp | undefined;
  let dir = "";
  afterEach(async () => {
    await server?.close();
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ ...process.env, PROMPTSTORE_URL: server?.url, PROMPTSTORE_API_KEY: server?.key });
  const ps = (args: string[]) =>
    run(process.execPath, [BIN, ...args], { env: env(), maxBuffer: 64 * 1024 * 1024 }).then(
      ({ stdout, stderr }) => ({ code: 0, out: stdout, err: stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        out: error.stdout,
        err: error.stderr,
      }),
    );

  it("imports a JSONL file (creating the dataset), appends a CSV file, lists, and exports byte for byte", async () => {
    server = await listeningApp(database);
    dir = mkdtempSync(join(tmpdir(), "promptstore-datasets-"));
    const first = manyCases(3_000);
    writeFileSync(join(dir, "cases.jsonl"), jsonl(first));
    const created = await ps(["datasets", "import", "Support", join(dir, "cases.jsonl"), "--json"]);
    expect(created.err).toBe("");
    expect(created.code).toBe(0);
    const data = JSON.parse(created.out);
    expect(data).toEqual({ id: data.id, name: "Support", version: versionHash(first), cases: 3_000 });

    writeFileSync(join(dir, "more.csv"), "company,expected,tags\nZeta,42,a|b\n");
    const appended = await ps([
      "datasets",
      "import",
      "Support",
      join(dir, "more.csv"),
      "--append",
      "--message",
      "one more",
    ]);
    const all = [...first, { vars: { company: "Zeta" }, expected: "42", tags: ["a", "b"] }];
    const head = versionHash(all);
    expect(appended).toEqual({ code: 0, out: `${data.id}  Support → ${head.slice(0, 12)}: 3001 cases\n`, err: "" });
    // The same file again: no new version.
    const again = await ps(["datasets", "import", "Support", join(dir, "cases.jsonl")]);
    expect(again.out).toBe(
      `${data.id}  Support unchanged at ${data.version.slice(0, 12)}: 3000 cases (this version existed already)\n`,
    );

    expect(await ps(["datasets", "list"])).toEqual({
      code: 0,
      out: `${data.id}  ${data.version.slice(0, 12)}  3000 cases  Support\n`,
      err: "",
    });

    const exported = await ps(["datasets", "export", "Support", "--version", head.slice(0, 9)]);
    expect(exported.code).toBe(0);
    expect(exported.out).toBe(jsonl(all));
    // Written to a file by the shell and imported back: the same version.
    const file = join(dir, "exported.jsonl");
    await new Promise<void>((resolve, reject) => {
      const child = spawn(`"${process.execPath}" "${BIN}" datasets export ${data.id} > "${file}"`, {
        shell: true,
        env: env(),
        stdio: "inherit",
      });
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
    });
    expect(readFileSync(file, "utf8")).toBe(jsonl(first));
    const copy = JSON.parse((await ps(["datasets", "import", "Copy", file, "--json"])).out);
    expect(copy.version).toBe(data.version);
  });

  it("says what went wrong, in one line, exit 1", async () => {
    server = await listeningApp(database);
    dir = mkdtempSync(join(tmpdir(), "promptstore-datasets-"));
    writeFileSync(join(dir, "bad.jsonl"), '{"vars":{"a":"1"}}\n{"vars":{"a":2}}\n');
    writeFileSync(join(dir, "cases.txt"), "x");
    expect(await ps(["datasets", "import", "D", join(dir, "bad.jsonl")])).toEqual({
      code: 1,
      out: "",
      err: "error: POST /api/v2/datasets/import: 400 line 2: vars.a: must be a string, not a number\n",
    });
    expect((await ps(["datasets", "import", "D", join(dir, "cases.txt")])).err).toBe(
      `error: ${join(dir, "cases.txt")}: give a .jsonl (or .ndjson) or a .csv file\n`,
    );
    expect((await ps(["datasets", "import", "D", join(dir, "none.csv")])).err).toBe(
      `error: ${join(dir, "none.csv")}: no such file\n`,
    );
    expect((await ps(["datasets", "export", "Nothing"])).err).toBe("error: no dataset named Nothing in this project\n");
    expect((await ps(["datasets", "export", "ds_000000000000000000000000", "--json"])).err).toBe(
      '{"error":"GET /api/v2/datasets/ds_000000000000000000000000/export: 404 dataset ds_000000000000000000000000 not found"}\n',
    );
    expect(await ps(["datasets", "list"])).toEqual({ code: 0, out: "no datasets\n", err: "" });
  });
});
