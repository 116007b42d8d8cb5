import { describe, expect, it } from "vitest";
import {
  countByStatus,
  type DiffSection,
  diffModel,
  diffSections,
  diffTools,
  prettyJson,
  stableIndices,
} from "../src/history/section-diff";

const s = (title: string, content = `${title} text`, enabled = true): DiffSection => ({ title, content, enabled });

/** The diff as `status title from→to` lines: exact, and readable when a test fails. */
const summary = (from: DiffSection[], to: DiffSection[]) =>
  diffSections(from, to).map((c) => `${c.status} ${c.title} ${c.fromIndex ?? "-"}→${c.toIndex ?? "-"}`);

describe("diffSections", () => {
  it("reports identical versions as unchanged, in order", () => {
    expect(summary([s("Role"), s("Rules")], [s("Role"), s("Rules")])).toEqual([
      "unchanged Role 0→0",
      "unchanged Rules 1→1",
    ]);
  });

  it("returns the full record of a change", () => {
    expect(diffSections([s("Role", "a")], [s("Role", "b", false)])).toEqual([
      {
        status: "changed",
        title: "Role",
        before: { title: "Role", content: "a", enabled: true },
        after: { title: "Role", content: "b", enabled: false },
        fromIndex: 0,
        toIndex: 0,
        moved: false,
        contentChanged: true,
        enabledChanged: true,
      },
    ]);
  });

  it("reports a content change and an enabled change separately", () => {
    const changes = diffSections([s("A", "x"), s("B")], [s("A", "y"), s("B", "B text", false)]);
    expect(changes.map((c) => [c.status, c.contentChanged, c.enabledChanged])).toEqual([
      ["changed", true, false],
      ["changed", false, true],
    ]);
  });

  it("places an added section where it was inserted", () => {
    expect(summary([s("A"), s("B")], [s("A"), s("New"), s("B")])).toEqual([
      "unchanged A 0→0",
      "added New -→1",
      "unchanged B 1→2",
    ]);
  });

  it("places a removed section where it stood", () => {
    expect(summary([s("A"), s("X"), s("B")], [s("A"), s("B")])).toEqual([
      "unchanged A 0→0",
      "removed X 1→-",
      "unchanged B 2→1",
    ]);
  });

  it("puts a removed section before what was added in the same gap", () => {
    expect(summary([s("A"), s("X"), s("B")], [s("A"), s("N"), s("B")])).toEqual([
      "unchanged A 0→0",
      "removed X 1→-",
      "added N -→1",
      "unchanged B 2→2",
    ]);
  });

  it("reports a rename as removed and added", () => {
    expect(summary([s("Role", "same")], [s("Persona", "same")])).toEqual(["removed Role 0→-", "added Persona -→0"]);
  });

  it("reports the section that went up as moved when two swap", () => {
    expect(summary([s("A"), s("B")], [s("B"), s("A")])).toEqual(["moved B 1→0", "unchanged A 0→1"]);
  });

  it("reports only the moved section when one goes to the end", () => {
    expect(summary([s("A"), s("B"), s("C")], [s("B"), s("C"), s("A")])).toEqual([
      "unchanged B 1→0",
      "unchanged C 2→1",
      "moved A 0→2",
    ]);
  });

  it("does not call sections moved when an insertion shifts them", () => {
    const changes = diffSections([s("A"), s("B"), s("C")], [s("N"), s("A"), s("B"), s("C")]);
    expect(changes.filter((c) => c.moved)).toEqual([]);
    expect(countByStatus(changes)).toEqual({ added: 1, unchanged: 3 });
  });

  it("keeps the moved flag and the content flag together", () => {
    const [first] = diffSections([s("A"), s("B", "old")], [s("B", "new"), s("A")]);
    expect(first).toMatchObject({
      status: "moved",
      title: "B",
      moved: true,
      contentChanged: true,
      enabledChanged: false,
    });
  });

  it("matches repeated titles in order of occurrence", () => {
    const from = [s("Example", "one"), s("Example", "two")];
    const to = [s("Example", "one"), s("Example", "2"), s("Example", "three")];
    expect(diffSections(from, to).map((c) => [c.status, c.fromIndex, c.toIndex, c.after?.content ?? null])).toEqual([
      ["unchanged", 0, 0, "one"],
      ["changed", 1, 1, "2"],
      ["added", null, 2, "three"],
    ]);
  });

  it("handles an empty side", () => {
    expect(summary([], [s("A")])).toEqual(["added A -→0"]);
    expect(summary([s("A"), s("B")], [])).toEqual(["removed A 0→-", "removed B 1→-"]);
    expect(summary([], [])).toEqual([]);
  });

  it("reports a mix of everything", () => {
    const from = [s("Role"), s("Context"), s("Rules", "old rules"), s("Format"), s("Legacy")];
    const to = [s("Format"), s("Role"), s("Rules", "new rules"), s("Examples"), s("Context", "Context text", false)];
    expect(summary(from, to)).toEqual([
      "moved Format 3→0",
      "unchanged Role 0→1",
      "changed Rules 2→2",
      "removed Legacy 4→-",
      "added Examples -→3",
      "moved Context 1→4",
    ]);
  });
});

describe("stableIndices", () => {
  it("keeps a longest increasing run, preferring later elements on ties", () => {
    expect([...stableIndices([0, 1, 2])].sort()).toEqual([0, 1, 2]);
    expect([...stableIndices([1, 0])]).toEqual([1]);
    expect([...stableIndices([0, 2, 1, 3])].sort()).toEqual([0, 2, 3]);
    expect([...stableIndices([])]).toEqual([]);
  });

  it("prefers keeping the elements that travelled least", () => {
    // [3, 0, 2, 1]: [0, 2] and [0, 1] are both longest; the element at 3 travelled 3, the one at 2 none.
    expect([...stableIndices([3, 0, 2, 1], [3, 1, 0, 3])].sort()).toEqual([1, 2]);
    expect([...stableIndices([3, 0, 2, 1])].sort()).toEqual([1, 3]);
  });
});

describe("diffTools", () => {
  const tool = (name: string, description?: string) => ({
    type: "function" as const,
    function: { name, ...(description === undefined ? {} : { description }), parameters: { type: "object" } },
  });

  it("matches tools by function name and reports each once", () => {
    const changes = diffTools(
      [tool("search", "Find"), tool("old"), tool("same")],
      [tool("same"), tool("search", "Look up"), tool("fresh")],
    );
    expect(changes.map((c) => [c.status, c.name])).toEqual([
      ["unchanged", "same"],
      ["changed", "search"],
      ["added", "fresh"],
      ["removed", "old"],
    ]);
    expect(changes[1]?.before).toBe(prettyJson(tool("search", "Find")));
    expect(changes[1]?.after).toBe(prettyJson(tool("search", "Look up")));
    expect(changes[2]?.before).toBeNull();
    expect(changes[3]?.after).toBeNull();
  });

  it("ignores the order of keys", () => {
    const a = { function: { parameters: { type: "object" }, name: "t" }, type: "function" };
    const b = { type: "function", function: { name: "t", parameters: { type: "object" } } };
    expect(diffTools([a], [b]).map((c) => c.status)).toEqual(["unchanged"]);
    expect(prettyJson(b)).toBe(
      '{\n  "function": {\n    "name": "t",\n    "parameters": {\n      "type": "object"\n    }\n  },\n  "type": "function"\n}',
    );
  });
});

describe("diffModel", () => {
  it("is nothing when neither version has settings", () => {
    expect(diffModel(undefined, undefined)).toBeNull();
  });

  it("says added, removed, changed or unchanged, titled by the model's name, as pretty JSON", () => {
    expect(diffModel(undefined, { name: "m" })).toEqual({
      status: "added",
      name: "m",
      before: null,
      after: '{\n  "name": "m"\n}',
    });
    expect(diffModel({ name: "m" }, undefined)).toMatchObject({ status: "removed", name: "m", after: null });
    expect(diffModel({ name: "a", temperature: 1 } as never, { name: "b" })).toMatchObject({
      status: "changed",
      name: "b",
    });
    // Key order is not a change.
    expect(diffModel({ temperature: 1, name: "a" } as never, { name: "a", temperature: 1 } as never)?.status).toBe(
      "unchanged",
    );
  });
});
