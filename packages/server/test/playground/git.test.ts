import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { listeningApp } from "../support/listening-app.js";

describe.each(DATABASES)("examples in git ($name)", (database) => {
  it("pull writes them beside the prompt file; an edited file is pushed back", { timeout: 120_000 }, async () => {
    const app = await listeningApp(database);
    const dir = mkdtempSync(join(tmpdir(), "promptstore-git-examples-"));
    try {
      const ps = (...args: string[]) => cli("", args, { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key });
      await app.call("POST", "/api/v2/prompts", {
        id: "support",
        name: "Support",
        sections: [{ title: "Role", content: "Help {{ customer }}." }],
      });
      const created = await app.call("POST", "/api/v2/prompts/support/examples", {
        name: "Refund",
        variables: { customer: "Ada" },
        messages: [{ role: "user", content: "Money back?" }],
        good_answer: "Links the form",
      });
      const example = created.body.data;

      expect((await ps("pull", dir)).code).toBe(0);
      const file = join(dir, "support.examples.json");
      const written = JSON.parse(readFileSync(file, "utf8"));
      expect(written).toEqual({
        examples: [
          {
            id: example.id,
            name: "Refund",
            variables: { customer: "Ada" },
            messages: [{ role: "user", content: "Money back?" }],
            good_answer: "Links the form",
            created_at: example.created_at,
            updated_at: example.updated_at,
          },
        ],
      });

      written.examples[0].name = "Refund, polite";
      writeFileSync(file, JSON.stringify(written));
      const pushed = await ps("push", dir);
      expect(pushed.code).toBe(0);
      const after = await app.call("GET", "/api/v2/prompts/support/examples");
      expect(after.body.data.examples.map((e: { id: string; name: string }) => [e.id, e.name])).toEqual([
        [example.id, "Refund, polite"],
      ]);

      writeFileSync(file, '{"examples":[{"name":1}]}');
      const refused = await ps("push", dir);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe("error: support.examples.json: examples[0].id: required\n");
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("export and import carry examples and their kept results", { timeout: 120_000 }, async () => {
    const source = await listeningApp(database);
    const target = await listeningApp(database);
    const dir = mkdtempSync(join(tmpdir(), "promptstore-bundle-examples-"));
    try {
      const saved = await source.call("POST", "/api/v2/prompts", {
        id: "support",
        name: "Support",
        sections: [{ title: "Role", content: "Help {{ customer }}." }],
      });
      const version = saved.body.data.version;
      const example = (
        await source.call("POST", "/api/v2/prompts/support/examples", {
          name: "Refund",
          variables: { customer: "Ada" },
        })
      ).body.data;
      const result = {
        example_id: example.id,
        version,
        settings_hash: "a".repeat(64),
        settings: { connection: "con_000000000000000000000000", guard: true, model: { name: "m" } },
        answer: { role: "assistant", content: "Sorry, here is the form" },
        finish_reason: "stop",
        usage: { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 },
        timing: { ttft_ms: 120, total_ms: 400 },
        ran_at: "2026-11-25T12:00:00.000Z",
      };
      // A kept result, through the same import the bundle uses: so it is marked imported, here and after.
      await source.call("POST", "/api/v2/prompts/support/examples/import", { examples: [], results: [result] });
      const file = join(dir, "bundle.json");
      const exported = await cli("", ["export", file], {
        PROMPTSTORE_URL: source.url,
        PROMPTSTORE_API_KEY: source.key,
      });
      expect(exported.code).toBe(0);
      const bundle = JSON.parse(readFileSync(file, "utf8"));
      expect(bundle.prompts[0].examples.map((e: { id: string }) => e.id)).toEqual([example.id]);
      expect(bundle.prompts[0].results).toEqual([{ ...result, imported: true }]);

      const imported = await cli("", ["import", file], {
        PROMPTSTORE_URL: target.url,
        PROMPTSTORE_API_KEY: target.key,
      });
      expect(imported.code).toBe(0);
      const there = await target.call("GET", "/api/v2/prompts/support/examples");
      expect(there.body.data.examples).toEqual([example]);
      const kept = await target.call("GET", `/api/v2/prompts/support/examples/results?version=${version}`);
      expect(kept.body.data.results).toEqual([{ ...result, imported: true }]);
    } finally {
      await source.close();
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
