import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BundleWriter } from "../../cli/git/bundle-writer.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const head = {
  format: "promptstore-bundle",
  format_version: 1,
  exported_at: "2026-11-25T12:00:00.000Z",
  project: { id: "p1", name: 'A "quoted"\nname \u2028' },
};

/** Prompts whose JSON has nesting, empty arrays and objects, escapes and line breaks inside strings. */
const prompt = (n: number) => ({
  id: `p-${n}`,
  name: `tab\there ${n} 😀`,
  description: "",
  created_at: "2026-11-25T12:00:00.000Z",
  production_version: n % 2 === 0 ? null : "a".repeat(64),
  latest_version: "b".repeat(64),
  versions: [
    {
      version: "b".repeat(64),
      message: null,
      created_at: "2026-11-25T12:00:00.000Z",
      saved_by: "cli",
      sections: [{ title: "Role", content: "line one\nline two\\n {{ x }}", enabled: true }],
      tools:
        n % 3 === 0
          ? []
          : [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }],
    },
  ],
});

describe("the bundle written prompt by prompt", () => {
  it.each([0, 1, 3])(
    "is byte for byte JSON.stringify(bundle, null, 2) with a newline, for %i prompts",
    async (count) => {
      const dir = mkdtempSync(join(tmpdir(), "bundle-writer-"));
      dirs.push(dir);
      const file = join(dir, "bundle.json");
      const writer = await BundleWriter.open(file, head);
      const prompts = Array.from({ length: count }, (_, n) => prompt(n));
      for (const p of prompts) await writer.add(p);
      await writer.close();
      expect(readFileSync(file, "utf8")).toBe(`${JSON.stringify({ ...head, prompts }, null, 2)}\n`);
    },
  );
});
