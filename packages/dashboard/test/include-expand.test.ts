import type { PromptView } from "@promptstore/core/views";
import { describe, expect, it } from "vitest";
import { distinctIncludes, pointedVersion, takenText, writtenIncludes } from "../src/includes/expand";

const view = (over: Partial<PromptView>): PromptView => ({
  id: "safety",
  name: "Safety",
  description: "",
  prompt: "",
  sections: [],
  variables: [],
  version: "l".repeat(64),
  label: "latest",
  production_version: null,
  created_at: "",
  updated_at: "",
  labels: {},
  ...over,
});

describe("the dashboard's include previews", () => {
  it("finds the includes written in a text, with their places, and skips what does not parse", () => {
    const text = "A {{> safety}} B {{> Bad}} C {{>tone#Voice@staging }}";
    expect(writtenIncludes(text)).toEqual([
      { reference: "safety", prompt: "safety", pointer: "production", written: false, from: 2, to: 14 },
      {
        reference: "tone#Voice@staging",
        prompt: "tone",
        section: "Voice",
        pointer: "staging",
        written: true,
        from: 29,
        to: 53,
      },
    ]);
    expect(distinctIncludes(["{{> a}} {{> a}}", "{{> b@latest}} {{> a}}"]).map((r) => r.reference)).toEqual([
      "a",
      "b@latest",
    ]);
    expect(writtenIncludes("no includes {{ name }}")).toEqual([]);
  });

  it("names the version a pointer names now, as a save would pin it", () => {
    const unpublished = view({ labels: { staging: "s".repeat(64) } });
    expect(pointedVersion(unpublished, "production")).toBe("l".repeat(64));
    expect(pointedVersion(view({ labels: { production: "p".repeat(64) } }), "production")).toBe("p".repeat(64));
    expect(pointedVersion(unpublished, "latest")).toBe("l".repeat(64));
    expect(pointedVersion(unpublished, "staging")).toBe("s".repeat(64));
    expect(pointedVersion(unpublished, "3f2a9c1")).toBe("3f2a9c1");
    expect(pointedVersion(unpublished, "eu-west")).toEqual({
      problem: "prompt safety has no version labelled eu-west",
    });
  });

  it("takes the enabled sections joined by a blank line, or one by title", () => {
    const version = view({
      sections: [
        { id: "s1", title: "Rules", content: "Never share secrets.", enabled: true },
        { id: "s2", title: "Old", content: "gone", enabled: false },
        { id: "s3", title: " Tone ", content: "Be kind.", enabled: true },
      ],
    });
    expect(takenText({ prompt: "safety", section: undefined }, version)).toBe("Never share secrets.\n\nBe kind.");
    expect(takenText({ prompt: "safety", section: "Tone" }, version)).toBe("Be kind.");
    expect(takenText({ prompt: "safety", section: "Old" }, version)).toEqual({
      problem: `version ${"l".repeat(12)} of safety has no enabled section titled "Old"`,
    });
  });
});
