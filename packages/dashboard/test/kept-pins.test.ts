import { describe, expect, it } from "vitest";
import { asWritten, keptPins } from "../src/editor/kept-pins";

const A = "a".repeat(64);
const B = "b".repeat(64);
const includes = [
  { include: "safety", prompt: "safety", section: null, pointer: "production", version: A },
  { include: "tone#Voice@staging", prompt: "tone", section: "Voice", pointer: "staging", version: B },
];

describe("the editor and includes", () => {
  it("edits a section as written, includes and all", () => {
    expect(asWritten({ id: "s", title: "T", content: "expanded", enabled: true, source: "{{> safety}}" })).toEqual({
      id: "s",
      title: "T",
      content: "{{> safety}}",
      enabled: true,
      source: "{{> safety}}",
    });
    expect(asWritten({ id: "s", title: "T", content: "plain", enabled: true }).content).toBe("plain");
  });

  it("keeps the pins of the includes still written, and only those", () => {
    expect(keptPins(includes, [{ content: "x {{> safety }}" }, { content: "{{>tone#Voice@staging}}" }])).toEqual({
      safety: A,
      "tone#Voice@staging": B,
    });
    expect(keptPins(includes, [{ content: "{{> safety}} {{> other}}" }])).toEqual({ safety: A });
    expect(keptPins(includes, [{ content: "none" }])).toBeUndefined();
    expect(keptPins(undefined, [{ content: "{{> safety}}" }])).toBeUndefined();
    // A section the server will refuse keeps nothing: the save's answer names the include.
    expect(keptPins(includes, [{ content: "{{> safety}} {{> Bad}}" }])).toBeUndefined();
  });
});
