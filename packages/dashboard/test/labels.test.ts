import { describe, expect, it } from "vitest";
import { byLabelOrder, labelColumns, labelEntries } from "../src/ui/labels";

describe("labels in the order the screens show them", () => {
  it("puts production first, then the others by name", () => {
    expect(["staging", "production", "canary", "eu"].sort(byLabelOrder)).toEqual([
      "production",
      "canary",
      "eu",
      "staging",
    ]);
  });

  it("makes the labels in use columns, production left out (it has its own), in the screens' order", () => {
    // As the server may send them (SQLite orders by bytes; PostgreSQL by its collation): the screens' order wins.
    const inUse = ["eu-west", "eu2", "eu_west", "production", "staging"];
    expect(labelColumns(inUse)).toEqual(["eu_west", "eu-west", "eu2", "staging"]);
    // The names it was given are left as they were.
    expect(inUse).toEqual(["eu-west", "eu2", "eu_west", "production", "staging"]);
    expect(labelColumns([])).toEqual([]);
  });

  it("gives a prompt's labels as pairs, production first", () => {
    expect(labelEntries({ staging: "b", production: "a" })).toEqual([
      ["production", "a"],
      ["staging", "b"],
    ]);
    expect(labelEntries(undefined)).toEqual([]);
  });
});
