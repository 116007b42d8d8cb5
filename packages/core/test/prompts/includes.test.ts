import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Content } from "../../src/prompts/content.js";
import { contentHash } from "../../src/prompts/hash.js";
import {
  expandedLength,
  expandIncludes,
  findIncludes,
  hasIncludes,
  includedText,
  isFixedPointer,
  parseInclude,
} from "../../src/prompts/includes.js";
import { extractVariables, VARIABLE_PATTERN } from "../../src/prompts/variables.js";

const PIN = "a".repeat(64);

describe("parseInclude", () => {
  it("reads the id, the section and the pointer, and writes the reference one way", () => {
    expect(parseInclude(" safety ")).toEqual({
      reference: "safety",
      prompt: "safety",
      pointer: "production",
      written: false,
    });
    expect(parseInclude("safety@staging")).toEqual({
      reference: "safety@staging",
      prompt: "safety",
      pointer: "staging",
      written: true,
    });
    expect(parseInclude("safety@latest")).toMatchObject({ reference: "safety@latest", pointer: "latest" });
    expect(parseInclude("safety@production")).toMatchObject({ reference: "safety@production", written: true });
    expect(parseInclude("safety@3f2a9c1")).toMatchObject({ reference: "safety@3f2a9c1", pointer: "3f2a9c1" });
    expect(parseInclude("tone#  Voice and style @staging")).toEqual({
      reference: "tone#Voice and style@staging",
      prompt: "tone",
      section: "Voice and style",
      pointer: "staging",
      written: true,
    });
    expect(parseInclude("tone#C# tips")).toMatchObject({ reference: "tone#C# tips", section: "C# tips" });
  });

  it("says what is wrong with what is not an include", () => {
    const syntax =
      "must be {{> prompt-id}}, optionally with #Section title, and @label, @latest or @<version hash or 7+ character prefix>";
    expect(parseInclude("Safety")).toEqual({ problem: syntax });
    expect(parseInclude("two words")).toEqual({ problem: syntax });
    expect(parseInclude("a@b@c")).toEqual({ problem: syntax });
    expect(parseInclude("")).toEqual({ problem: syntax });
    expect(parseInclude("tone#  @staging")).toEqual({ problem: "must name a section title after #" });
    expect(parseInclude("safety@Staging")).toEqual({
      problem: "@Staging: must be latest, a label, or 7-64 lowercase hex characters of a version hash",
    });
    expect(parseInclude("safety@abc")).toMatchObject({ problem: expect.stringContaining("@abc:") });
    expect(parseInclude("safety@")).toMatchObject({ problem: expect.stringContaining("@:") });
  });

  it("tells a pointer that names a version for good from one that moves", () => {
    expect(isFixedPointer("3f2a9c1")).toBe(true);
    expect(isFixedPointer(PIN)).toBe(true);
    expect(["production", "latest", "staging", "beta2"].map(isFixedPointer)).toEqual([false, false, false, false]);
  });
});

describe("findIncludes", () => {
  it("finds each include once, in order of first appearance, in every section (enabled or not)", () => {
    const found = findIncludes([
      { content: "a {{> safety}} b {{>tone#Voice@staging}} {{ safety }}" },
      { content: "{{>  safety  }} {{> faq@latest}}" },
    ]);
    expect(found).toEqual({
      includes: [
        { reference: "safety", prompt: "safety", pointer: "production", written: false, at: 0 },
        { reference: "tone#Voice@staging", prompt: "tone", section: "Voice", pointer: "staging", written: true, at: 0 },
        { reference: "faq@latest", prompt: "faq", pointer: "latest", written: true, at: 1 },
      ],
    });
  });

  it("names the section and the include that does not parse", () => {
    expect(findIncludes([{ content: "ok" }, { content: "x {{> Bad}}" }])).toEqual({
      section: 1,
      problem: expect.stringMatching(/^include "\{\{> Bad\}\}": must be/),
    });
  });

  it("leaves apart what is not written as an include, and is never taken for a variable", () => {
    const content = "{{ > a}} {{>a\n}} {{> a} } {{ name }}";
    expect(hasIncludes([{ content }])).toBe(false);
    expect(findIncludes([{ content }])).toEqual({ includes: [] });
    expect([..."{{> name}}".matchAll(VARIABLE_PATTERN)]).toEqual([]);
    expect(hasIncludes([{ content: "x" }, { content: "{{>a}}" }])).toBe(true);
    // Found wherever `{{>` … `}}` is written, as a variable is: the braces around it stay.
    expect(findIncludes([{ content: "{{{> a}}}" }])).toMatchObject({ includes: [{ reference: "a" }] });
    expect(expandIncludes("{{{> a}}}", new Map([["a", "A"]]))).toBe("{A}");
  });
});

describe("expansion", () => {
  const sections = [
    { title: "Rules", content: "No secrets.", enabled: true },
    { title: "Draft", content: "Not served.", enabled: false },
    { title: " Tone ", content: "Be kind, {{ name }}.", enabled: true },
  ];

  it("takes the enabled sections joined by a blank line, or one enabled section by its title", () => {
    expect(includedText(sections, undefined)).toBe("No secrets.\n\nBe kind, {{ name }}.");
    expect(includedText(sections, "Tone")).toBe("Be kind, {{ name }}.");
    expect(includedText(sections, "Draft")).toBeUndefined();
    expect(includedText(sections, "Nope")).toBeUndefined();
  });

  it("replaces every spelling of an include by its text, once, without scanning the text again", () => {
    const texts = new Map([
      ["safety", "SAFE {{> loop}}"],
      ["tone#Tone", "Be kind, {{ name }}."],
    ]);
    const expanded = expandIncludes("A {{> safety}} B {{>safety }} C {{> tone#Tone}} {{> other}}", texts);
    expect(expanded).toBe("A SAFE {{> loop}} B SAFE {{> loop}} C Be kind, {{ name }}. {{> other}}");
    expect(extractVariables([{ title: "T", content: expanded, enabled: true }])).toEqual(["name"]);
    const written = "A {{> safety}} B {{>safety }} C {{> tone#Tone}} {{> other}}";
    expect(expandedLength(written, texts)).toBe(expanded.length);
    expect(expandedLength("no includes", texts)).toBe(11);
  });
});

describe("contentHash with includes", () => {
  const base: Content = { sections: [{ title: "Role", content: "{{> safety}}", enabled: true }], tools: [] };

  it("hashes as before includes when the version has none, and covers the pins when it has", () => {
    const plain = '{"sections":[{"content":"{{> safety}}","enabled":true,"title":"Role"}],"tools":[]}';
    expect(contentHash(base)).toBe(createHash("sha256").update(plain).digest("hex"));
    expect(contentHash({ ...base, includes: {} })).toBe(contentHash(base));
    const pinned = `{"includes":{"safety":"${PIN}"},"sections":[{"content":"{{> safety}}","enabled":true,"title":"Role"}],"tools":[]}`;
    expect(contentHash({ ...base, includes: { safety: PIN } })).toBe(createHash("sha256").update(pinned).digest("hex"));
    expect(contentHash({ ...base, includes: { safety: PIN } })).toBe(
      "41c3987a0f5181498ddcd2d11319f1074a4a56b5ccc8e3b5c63cb2cc4bcb08bf",
    );
    expect(contentHash({ ...base, includes: { safety: "b".repeat(64) } })).not.toBe(
      contentHash({ ...base, includes: { safety: PIN } }),
    );
  });
});
