/**
 * The `promptstore` command where prompts live (issue 35): installed from a running server's /sdk/ with the
 * README's line into a scratch prefix, then the README's whole git workflow in a scratch git repository
 * outside the project, with PROMPTSTORE_URL and PROMPTSTORE_API_KEY only. SQLite only: what is tested is
 * the packaging, not the store.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cli, type RunningServer, startServer } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));

async function sh(command: string, cwd: string, env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run("sh", ["-c", command], {
      cwd,
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe.each(DATABASES.filter((d) => d.name === "sqlite"))(
  "sdk: the promptstore command installed from a running server ($name)",
  (database) => {
    let server: RunningServer;
    let databaseUrl = "";
    let drop = async () => {};
    let scratch = "";
    let project = "";
    let env: Record<string, string> = {};

    beforeAll(async () => {
      const created = await database.create();
      drop = created.drop;
      databaseUrl = created.url;
      server = await startServer(created.url, { PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
      const bootstrap = server.events.find((e) => e.event === "bootstrap");
      project = bootstrap?.project.id as string;
      scratch = mkdtempSync(join(tmpdir(), "promptstore-cli-"));
      expect(scratch.startsWith(REPO)).toBe(false);
      // A prefix of its own, so that `npm install -g` never touches the machine's; its bin/ leads PATH.
      env = {
        PROMPTSTORE_URL: server.url,
        PROMPTSTORE_API_KEY: bootstrap?.key.key as string,
        npm_config_prefix: join(scratch, "global"),
        npm_config_cache: join(scratch, "npm-cache"),
        npm_config_audit: "false",
        npm_config_fund: "false",
        // Without this repository's node_modules/.bin (npx puts it on PATH), whose promptstore is the server's.
        PATH: [
          join(scratch, "global", "bin"),
          ...String(process.env.PATH)
            .split(":")
            .filter((d) => !d.includes(REPO)),
        ].join(":"),
        NO_COLOR: "1",
        GIT_AUTHOR_NAME: "Dev",
        GIT_AUTHOR_EMAIL: "dev@example.com",
        GIT_COMMITTER_NAME: "Dev",
        GIT_COMMITTER_EMAIL: "dev@example.com",
      };
      const res = await fetch(`${server.url}/api/v2/prompts`, {
        method: "POST",
        headers: { "x-api-key": env.PROMPTSTORE_API_KEY as string, "content-type": "application/json" },
        body: JSON.stringify({
          name: "Support Bot",
          sections: [{ title: "Role", content: "You help customers of {{ company }}." }],
          publish: true,
        }),
      });
      expect(res.status).toBe(201);
    });

    afterAll(async () => {
      await server?.stop("SIGKILL");
      await drop();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    test("npm install -g $PROMPTSTORE_URL/sdk/promptstore-client.tgz, then the README's git workflow", {
      timeout: 240_000,
    }, async () => {
      const readme = readFileSync(join(REPO, "README.md"), "utf8");
      const install = readme.match(/^(npm install -g "\$PROMPTSTORE_URL\/sdk\/promptstore-client\.tgz")/m)?.[1];
      expect(install).toBeDefined();
      const installed = await sh(install as string, scratch, env);
      expect(installed.stderr).not.toMatch(/ERR!|EBADENGINE/);
      expect(installed.code).toBe(0);
      const which = await sh("command -v promptstore", scratch, env);
      expect(which.stdout.trim()).toBe(join(scratch, "global", "bin", "promptstore"));

      const repo = join(scratch, "app");
      mkdirSync(repo);
      const ps = (args: string) => sh(`promptstore ${args}`, repo, env);
      expect((await sh("git init -q", repo, env)).code).toBe(0);

      const pulled = await ps("pull prompts/");
      expect(pulled.stderr).toBe("");
      expect(pulled.code).toBe(0);
      expect(readFileSync(join(repo, "prompts/support-bot.md"), "utf8")).toBe(
        "---\nid: support-bot\nname: Support Bot\n---\n\n# Role\n\nYou help customers of {{ company }}.\n",
      );
      expect((await sh("git add prompts && git commit -qm prompts", repo, env)).code).toBe(0);

      writeFileSync(
        join(repo, "prompts/support-bot.md"),
        "---\nid: support-bot\nname: Support Bot\n---\n\n# Role\n\nYou warmly help customers of {{ company }}.\n",
      );
      const status = await ps("status prompts/");
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/ support-bot\.md +changed locally\n$/);
      const diff = await ps("diff prompts/");
      expect(diff.code).toBe(0);
      expect(diff.stdout).toMatch(/^support-bot\.md \(support-bot\): server latest [0-9a-f]{12} → file [0-9a-f]{12}\n/);
      expect(diff.stdout).toContain(
        "    -You help customers of {{ company }}.\n    +You warmly help customers of {{ company }}.\n",
      );
      expect((await ps("check prompts/")).stdout).toBe("production matches promptstore.lock\n");

      const pushed = await ps('push prompts/ --message "warmer tone" --json');
      expect(pushed.code).toBe(0);
      const [saved] = JSON.parse(pushed.stdout).prompts as { id: string; result: string; version: string }[];
      expect([saved?.id, saved?.result]).toEqual(["support-bot", "saved"]);
      const candidate = saved?.version as string;
      // Saved, not published: production is where the lock says, and the guard agrees.
      expect((await ps("check prompts/")).stdout).toBe("production matches promptstore.lock\n");

      const published = await ps("push prompts/ --publish --json");
      expect(published.code).toBe(0);
      expect(JSON.parse(published.stdout).prompts).toMatchObject([{ id: "support-bot", published: true }]);
      expect((await ps("check prompts/")).code).toBe(0);
      expect((await sh("git add prompts && git commit -qm 'warmer tone'", repo, env)).code).toBe(0);

      // Labels and releases through the same key: staging moves; production, once protected, needs a request.
      const staged = await ps(`label move support-bot staging ${candidate.slice(0, 7)} --json`);
      expect(staged.code).toBe(0);
      expect(JSON.parse(staged.stdout)).toMatchObject({ id: "support-bot", label: "staging", version: candidate });
      const staging = await ps("check prompts/ --label staging");
      expect([staging.code, staging.stderr]).toEqual([
        1,
        "error: staging differs from promptstore.lock for 1 prompt(s)\n",
      ]);
      expect((await cli(databaseUrl, ["label", "set", project, "production", "--protected"])).code).toBe(0);
      const refused = await ps("label move support-bot production");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: .*production.*protected/);
      const requested = await ps(`release request support-bot production ${candidate} --message "warmer tone" --json`);
      expect(requested.code).toBe(0);
      const release = JSON.parse(requested.stdout) as { id: string; status: string; version: string };
      expect([release.status, release.version]).toEqual(["pending", candidate]);
      const listed = await ps("release list --status pending --json");
      expect(JSON.parse(listed.stdout).releases.map((r: { id: string }) => r.id)).toEqual([release.id]);
      const shown = await ps(`release show ${release.id}`);
      expect(shown.stdout.split("\n")[0]).toBe(
        `${release.id}  pending  support-bot:production → ${candidate.slice(0, 12)}  by ${JSON.parse(requested.stdout).requested_by}`,
      );
    });

    test("promptstore --help starts fast and names the server's own commands as the server's", async () => {
      const started = performance.now();
      const help = await sh("promptstore --help", scratch, env);
      const elapsed = performance.now() - started;
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("  push <dir>  ");
      expect(help.stdout).toContain("Running the server (serve, org, user, backup, …) is\nthe server's own");
      // Node.js alone starts in about 40 ms here; the help reads one small module. Generous for a busy machine.
      expect(elapsed).toBeLessThan(1000);
      const serve = await sh("promptstore serve", scratch, env);
      expect(serve.code).toBe(1);
      expect(serve.stderr).toBe(
        "error: serve is the server's own command (its promptstore binary); this one speaks to a server over HTTP\n",
      );
    });
  },
);
