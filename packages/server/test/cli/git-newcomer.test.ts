/**
 * What a newcomer met with prompts in git (issue 20): a hand-written file without id or name is told which
 * front-matter keys it needs, and push into a misspelled directory says it holds no prompt files (exit 1)
 * instead of pushing nothing and leaving a lockfile there.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";

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

const ps = (app: ListeningApp, args: string[]): Promise<CliResult> =>
  cli("", args, { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key });

describe.each(DATABASES.filter((d) => d.name === "sqlite"))(
  "prompts in git, as a newcomer meets them ($name)",
  (database) => {
    it("a new file without id or name is told which front-matter keys it needs", { timeout: 60_000 }, async () => {
      const dir = tempDir();
      writeFileSync(join(dir, "support.md"), "---\ndescription: First-line support\n---\n\n# Role\n\nHelp.\n");
      const both = await cli("", ["status", dir, "--offline"]);
      expect(both.code).toBe(1);
      expect(both.stderr).toBe(
        "error: support.md: front matter: missing id and name; every prompt file needs id (the prompt's slug: " +
          'lowercase letters, digits, _ and -, e.g. "id: support-bot") and name ("name: Support Bot"); description, ' +
          "tools and disabled are optional\n",
      );
      writeFileSync(join(dir, "support.md"), "---\nid: support\n---\n\n# Role\n\nHelp.\n");
      expect((await cli("", ["status", dir, "--offline"])).stderr).toMatch(
        /^error: support\.md: front matter: missing name;/,
      );
      // No front matter values at all (an empty block) names both too.
      writeFileSync(join(dir, "support.md"), "---\n---\n\n# Role\n\nHelp.\n");
      expect((await cli("", ["status", dir, "--offline"])).stderr).toMatch(/missing id and name;/);
    });

    it("push into a misspelled directory says it holds no prompt files, exits 1 and writes nothing", {
      timeout: 60_000,
    }, async () => {
      const app = await listeningApp(database);
      apps.push(app);
      const root = tempDir();
      const misspelled = join(root, "promtps");
      const missing = await ps(app, ["push", misspelled]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe(
        `error: ${misspelled}: no such directory, so it holds no prompt files; check the path, or promptstore pull ${misspelled} first\n`,
      );
      expect(existsSync(misspelled)).toBe(false);
      // A directory that exists but holds no prompt file: the same refusal, and no lockfile written.
      const empty = await ps(app, ["push", root]);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toMatch(/holds no prompt files/);
      expect(existsSync(join(root, "promptstore.lock"))).toBe(false);
    });
  },
);
