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
      expect(refused.stderr).toBe(
        "error: support.examples.json: examples[0].id: Invalid input: expected string, received undefined\n",
      );
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
