import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Content } from "../src/content.js";
import { contentHash, withSectionIds } from "../src/hash.js";
import { isFullHash } from "../src/version-ref.js";

const base: Content = {
  sections: [
    { title: "Role", content: "You are {{ role }}.", enabled: true },
    { title: "Rules", content: "Be brief.", enabled: false },
  ],
  tools: [],
};

describe("contentHash", () => {
  it("is SHA-256 of the RFC 8785 canonical JSON documented in the README", () => {
    const canonical =
      '{"sections":[{"content":"You are {{ role }}.","enabled":true,"title":"Role"},{"content":"Be brief.","enabled":false,"title":"Rules"}],"tools":[]}';
    expect(contentHash(base)).toBe(createHash("sha256").update(canonical).digest("hex"));
  });

  it("does not depend on the key order of the objects it is given", () => {
    const reordered = {
      tools: [],
      sections: base.sections.map((s) => ({ enabled: s.enabled, content: s.content, title: s.title })),
    } as Content;
    expect(contentHash(reordered)).toBe(contentHash(base));
  });

  it("does not depend on the key order inside tool parameters", () => {
    const tool = (parameters: Record<string, unknown>): Content => ({
      sections: base.sections,
      tools: [{ type: "function", function: { name: "f", parameters } }],
    });
    const a = tool({ type: "object", properties: { x: { type: "number" } }, required: ["x"] });
    const b = tool({ required: ["x"], properties: { x: { type: "number" } }, type: "object" });
    expect(contentHash(a)).toBe(contentHash(b));
    expect(contentHash(a)).not.toBe(contentHash(base));
  });

  it("changes with order, enabled, title and content", () => {
    const hashes = new Set([
      contentHash(base),
      contentHash({ ...base, sections: [...base.sections].reverse() }),
      contentHash({ ...base, sections: [{ ...base.sections[0]!, enabled: false }, base.sections[1]!] }),
      contentHash({ ...base, sections: [{ ...base.sections[0]!, title: "role" }, base.sections[1]!] }),
      contentHash({ ...base, sections: [{ ...base.sections[0]!, content: "You are {{ role }}" }, base.sections[1]!] }),
    ]);
    expect(hashes.size).toBe(5);
  });

  it("hashes unicode by its characters: composed and decomposed forms differ, escapes do not matter", () => {
    const composed = contentHash({ sections: [{ title: "é", content: "café ☕", enabled: true }], tools: [] });
    const again = contentHash({
      sections: [{ title: "\u00e9", content: "caf\u00e9 \u2615", enabled: true }],
      tools: [],
    });
    const decomposed = contentHash({ sections: [{ title: "e\u0301", content: "café ☕", enabled: true }], tools: [] });
    expect(again).toBe(composed);
    expect(decomposed).not.toBe(composed);
  });

  it("is 64 lowercase hex characters", () => {
    expect(contentHash(base)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("withSectionIds", () => {
  it("gives the same ids to the same content and keeps an unchanged section's id across versions", () => {
    const a = withSectionIds(base.sections);
    const b = withSectionIds([{ title: "New", content: "first", enabled: true }, ...base.sections]);
    expect(withSectionIds(base.sections)).toEqual(a);
    expect(b[1]!.id).toBe(a[0]!.id);
    expect(b[2]!.id).toBe(a[1]!.id);
  });

  it("keeps ids unique within a version even for identical sections", () => {
    const same = { title: "A", content: "x", enabled: true };
    const ids = withSectionIds([same, same, same]).map((s) => s.id);
    expect(new Set(ids).size).toBe(3);
  });
});

describe("isFullHash", () => {
  it("is true for 64 lowercase hex characters only", () => {
    expect(isFullHash(contentHash(base))).toBe(true);
    expect(isFullHash(contentHash(base).slice(0, 63))).toBe(false);
    expect(isFullHash(contentHash(base).toUpperCase())).toBe(false);
    expect(isFullHash(`${contentHash(base)}0`)).toBe(false);
    expect(isFullHash("latest")).toBe(false);
  });
});
