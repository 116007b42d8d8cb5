import { describe, expect, it } from "vitest";
import { byLabelOrder, labelEntries, labelsInUse } from "../src/ui/labels";

describe("labels in the order the screens show them", () => {
  it("puts production first, then the others by name", () => {
    expect(["staging", "production", "canary", "eu"].sort(byLabelOrder)).toEqual([
      "production",
      "canary",
      "eu",
      "staging",
    ]);
  });

  it("lists the labels in use as columns, production left out (it has its own)", () => {
    expect(
      labelsInUse([{ labels: { production: "a", staging: "b" } }, { labels: { canary: "c" } }, { labels: {} }, {}]),
    ).toEqual(["canary", "staging"]);
  });

  it("gives a prompt's labels as pairs, production first", () => {
    expect(labelEntries({ staging: "b", production: "a" })).toEqual([
      ["production", "a"],
      ["staging", "b"],
    ]);
    expect(labelEntries(undefined)).toEqual([]);
  });
});
