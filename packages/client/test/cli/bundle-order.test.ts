import { describe, expect, it } from "vitest";
import { type Bundle, piecesFirst } from "../../cli/git/bundle.js";

type Prompt = Bundle["prompts"][number];

/** A bundled prompt whose one version pins the given references (only the order is looked at). */
const prompt = (id: string, references: string[] = []): Prompt => ({
  id,
  name: id,
  created_at: "2026-11-25T12:00:00.000Z",
  production_version: null,
  latest_version: "b".repeat(64),
  versions: [
    {
      version: "b".repeat(64),
      created_at: "2026-11-25T12:00:00.000Z",
      sections: [],
      ...(references.length > 0 ? { includes: Object.fromEntries(references.map((r) => [r, "c".repeat(64)])) } : {}),
    },
  ],
});

const ids = (prompts: Prompt[]) => prompts.map((p) => p.id);

describe("import order of a bundle with includes (docs/git.md)", () => {
  it("keeps the bundle's order when nothing pins anything", () => {
    const prompts = [prompt("b"), prompt("a"), prompt("c")];
    expect(piecesFirst(prompts)).toBe(prompts);
  });

  it("puts every prompt after the prompts its pins name, through any depth; others keep their order", () => {
    const prompts = [
      prompt("support", ["safety", "tone#Voice@staging"]),
      prompt("faq", ["support@latest"]),
      prompt("plain"),
      prompt("tone"),
      prompt("safety", ["outside"]),
    ];
    expect(ids(piecesFirst(prompts))).toEqual(["plain", "tone", "safety", "support", "faq"]);
  });

  it("leaves prompts that pin each other in the bundle's order, after what they need", () => {
    const prompts = [prompt("a", ["b"]), prompt("b", ["a", "c"]), prompt("c"), prompt("d", ["a"])];
    expect(ids(piecesFirst(prompts))).toEqual(["c", "a", "b", "d"]);
  });
});
