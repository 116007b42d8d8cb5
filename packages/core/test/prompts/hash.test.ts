import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Content } from "../../src/prompts/content.js";
import { contentHash, modelJson, withSectionIds } from "../../src/prompts/hash.js";
import { isFullHash } from "../../src/version-ref.js";

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

/**
 * Hashes recorded before model settings existed (computed by that code, one of them also pinned by the server's
 * version-documents test): a version without settings must keep its name for good.
 */
const RECORDED: [string, Content][] = [
  [
    "43b6a5e6b6db536b811332692f7f0b568a9162d05433d5f151a6ef1fe1961405",
    { sections: [{ title: "Role", content: "Hi", enabled: true }], tools: [] },
  ],
  [
    "d503e3ebace348a12d16cfd2de7ae076e907018cea8c864d49255813dd14580d",
    {
      sections: [
        { title: "Role", content: "Help {{ company }}.", enabled: true },
        { title: "Off", content: "{{ x }}", enabled: false },
      ],
      tools: [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" } } }],
    },
  ],
  [
    "383c7f683b1530007edc3068443126cf746f10a86d3d26b808f2f852728b0b14",
    {
      sections: [{ title: "Rôle ☕", content: 'Say "hi"\n\ttab \u2028 😀', enabled: true }],
      tools: [
        {
          type: "function",
          function: {
            name: "lookup",
            parameters: {
              type: "object",
              properties: { q: { type: "string" }, n: { type: "number" } },
              required: ["q"],
            },
          },
        },
      ],
    },
  ],
];

describe("contentHash with model settings", () => {
  it("keeps every hash recorded before model settings, with model absent or undefined", () => {
    for (const [hash, content] of RECORDED) {
      expect(contentHash(content)).toBe(hash);
      expect(contentHash({ ...content, model: undefined })).toBe(hash);
    }
  });

  it('hashes {"model","sections","tools"} canonically when the version has settings', () => {
    const content: Content = {
      ...base,
      model: {
        name: "gpt-4o",
        temperature: 0.2,
        stop: ["END"],
        response_format: { type: "json_object" },
        extra: { seed: 7, b: [1, { z: true, a: null }] },
      },
    };
    const canonical =
      '{"model":{"extra":{"b":[1,{"a":null,"z":true}],"seed":7},"name":"gpt-4o","response_format":{"type":"json_object"},"stop":["END"],"temperature":0.2},' +
      '"sections":[{"content":"You are {{ role }}.","enabled":true,"title":"Role"},{"content":"Be brief.","enabled":false,"title":"Rules"}],"tools":[]}';
    expect(contentHash(content)).toBe(createHash("sha256").update(canonical).digest("hex"));
    expect(contentHash(content)).toBe("40eb401bd90086f3839d7e5c832ceefdae4388f510dfc8258de240bb5b11d0ae");
  });

  it("gives the README's recipe its printed hash", () => {
    const sections = [{ title: "Role", content: "Hi", enabled: true }];
    expect(contentHash({ sections, tools: [], model: { name: "gpt-4o", temperature: 0.2 } })).toBe(
      "aa7e1540e28a28736f0b9a5cc4dfd58d5cd8abcb4925b157b150bff5bad56ea6",
    );
  });

  it("gives identical settings the identical hash, whatever their key order", () => {
    const a: Content = { ...base, model: { name: "m", top_p: 0.5, max_output_tokens: 100, extra: { x: 1, y: 2 } } };
    const b = {
      ...base,
      model: { extra: { y: 2, x: 1 }, max_output_tokens: 100, top_p: 0.5, name: "m" },
    } as Content;
    expect(contentHash(b)).toBe(contentHash(a));
    expect(modelJson(b.model!)).toBe('{"extra":{"x":1,"y":2},"max_output_tokens":100,"name":"m","top_p":0.5}');
  });

  it("changes with any setting, and differs from the same sections without settings", () => {
    const hashes = new Set([
      contentHash(base),
      contentHash({ ...base, model: { name: "m" } }),
      contentHash({ ...base, model: { name: "n" } }),
      contentHash({ ...base, model: { name: "m", temperature: 0 } }),
      contentHash({ ...base, model: { name: "m", temperature: 1 } }),
      contentHash({ ...base, model: { name: "m", top_p: 1 } }),
      contentHash({ ...base, model: { name: "m", max_output_tokens: 1 } }),
      contentHash({ ...base, model: { name: "m", stop: ["a"] } }),
      contentHash({ ...base, model: { name: "m", response_format: { type: "text" } } }),
      contentHash({ ...base, model: { name: "m", extra: {} } }),
    ]);
    expect(hashes.size).toBe(10);
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
