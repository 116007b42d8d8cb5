import { describe, expect, it } from "vitest";
import { caseToForm, editedList, fieldOfEditedCase, formToCase, varRow } from "../src/datasets/case-form";
import { csvRecords, detectFormat, previewText } from "../src/datasets/file-preview";
import { diffSummary, diffVersions } from "../src/datasets/version-diff";

describe("a dataset file's preview (the server's rules, read before sending)", () => {
  it("reads JSONL: blank lines skipped, CRLF and a byte order mark taken, the first cases shown", () => {
    const text =
      '\ufeff{"vars":{"customer":"Ada"},"expected":"Hi Ada","tags":["vip"]}\r\n\n{"vars":{"customer":"Bob","plan":"pro"}}\n';
    const preview = previewText(text, "jsonl");
    expect(preview).toEqual({
      format: "jsonl",
      count: 2,
      cases: [
        { line: 1, vars: { customer: "Ada" }, expected: "Hi Ada", tags: ["vip"] },
        { line: 3, vars: { customer: "Bob", plan: "pro" } },
      ],
      columns: ["customer", "plan"],
      problem: null,
      partial: false,
    });
  });

  it("names the first bad JSONL line in the server's words", () => {
    expect(previewText('{"vars":{}}\nnot json\n', "jsonl").problem).toBe("line 2: is not valid JSON");
    expect(previewText('{"vars":{"a":1}}', "jsonl").problem).toBe("line 1: vars.a: must be a string");
    expect(previewText('{"vars":{},"extra":true}', "jsonl").problem).toBe("line 1: extra: is not a known field");
    expect(previewText("[1,2]", "jsonl").problem).toBe(
      'line 1: must be a JSON object ({ "vars": {…}, "expected"?: … })',
    );
    expect(previewText('{"vars":{}}\n{"vars":{}}\nnope', "jsonl").count).toBe(2);
  });

  it("a file's start: the last line, cut short, is not looked at", () => {
    const preview = previewText('{"vars":{"a":"1"}}\n{"vars":{"a":"2"}}\n{"vars":{"a', "jsonl", { partial: true });
    expect([preview.count, preview.problem, preview.partial]).toEqual([2, null, true]);
  });

  it("reads CSV: a header, reserved columns, tags split on |, quoted fields with commas, quotes and line breaks", () => {
    const text = 'customer,expected,tags,note\r\nAda,"Hi, Ada",vip | new,"says ""hi""\nand more"\nBob,,,\n';
    const preview = previewText(text, "csv");
    expect(preview.cases).toEqual([
      { line: 2, vars: { customer: "Ada", note: 'says "hi"\nand more' }, expected: "Hi, Ada", tags: ["vip", "new"] },
      { line: 4, vars: { customer: "Bob", note: "" } },
    ]);
    expect([preview.count, preview.columns, preview.problem]).toEqual([2, ["customer", "note"], null]);
  });

  it("names CSV problems as the server does", () => {
    expect(previewText("", "csv").problem).toBe("line 1: a CSV import needs a header row naming its columns");
    expect(previewText("a,b\n1\n", "csv").problem).toBe("line 2: does not have as many fields as the header");
    expect(previewText("a,a\n1,2\n", "csv").problem).toBe('line 1: column "a" appears twice');
    expect(previewText("a,\n1,2\n", "csv").problem).toBe("line 1: column 2 has no name");
    expect(previewText('a\n"open\n', "csv").problem).toBe("line 2: a quoted field is not closed");
    expect(previewText('a\nx"y\n', "csv").problem).toBe("line 2: has a quote inside an unquoted field");
    expect(previewText('a\n"x"y\n', "csv").problem).toBe("line 2: has a character after a closing quote");
    expect(previewText("a,messages\n1,[oops\n", "csv").problem).toBe("line 2: messages: is not valid JSON");
  });

  it("a CSV file's start stops at the last whole record", () => {
    expect(csvRecords('a\n1\n"two\nlines', true).records.map((r) => r.fields)).toEqual([["a"], ["1"]]);
    expect(csvRecords("a\n1\n2", true).records.map((r) => r.fields)).toEqual([["a"], ["1"]]);
    expect(csvRecords("a\n1\n2", false).records.map((r) => r.fields)).toEqual([["a"], ["1"], ["2"]]);
  });

  it("tells the format by the file's name, else by its first character", () => {
    expect(detectFormat("cases.JSONL", "a,b")).toBe("jsonl");
    expect(detectFormat("cases.csv", "{")).toBe("csv");
    expect(detectFormat("", '  {"vars":{}}')).toBe("jsonl");
    expect(detectFormat("pasted", "customer,expected")).toBe("csv");
  });
});

describe("the diff of two dataset versions by case id", () => {
  const refs = (...ids: string[]) => ids.map((id, position) => ({ id, position }));

  it("an edited case is one removed and one added; the unchanged are counted", () => {
    const diff = diffVersions(refs("a", "b", "c"), refs("a", "b2", "c", "d"));
    expect(diff).toEqual({
      added: [
        { id: "b2", position: 1 },
        { id: "d", position: 3 },
      ],
      removed: [{ id: "b", position: 1 }],
      kept: 2,
      reordered: false,
    });
    expect(diffSummary(diff)).toBe("2 added, 1 removed, 2 unchanged");
  });

  it("says when nothing changed, and when only the order did", () => {
    expect(diffSummary(diffVersions(refs("a", "b"), refs("a", "b")))).toBe("no difference");
    const reordered = diffVersions(refs("a", "b", "c"), refs("c", "a", "b"));
    expect(reordered.reordered).toBe(true);
    expect(diffSummary(reordered)).toBe("the same 3 cases, in another order");
    expect(diffSummary(diffVersions(refs("a", "b"), refs("b", "x")))).toBe("1 added, 1 removed, 1 unchanged");
    expect(diffSummary(diffVersions(refs("a", "b", "c"), refs("c", "b")))).toBe(
      "1 removed, 2 unchanged (and reordered)",
    );
  });
});

describe("a case as a form edits it", () => {
  it("round-trips a case, in the server's one form: tags sorted once each, empty lists none", () => {
    const value = {
      vars: { customer: "Ada", plan: "" },
      messages: [{ role: "user" as const, content: "Hi" }],
      expected: "Hello",
      tags: ["b", "a"],
    };
    const form = caseToForm(value);
    expect(form.tags).toBe("b, a");
    expect(formToCase({ ...form, tags: "b, a, b, " })).toEqual({
      ok: true,
      value: {
        vars: { customer: "Ada", plan: "" },
        messages: [{ role: "user", content: "Hi" }],
        expected: "Hello",
        tags: ["a", "b"],
      },
    });
    expect(formToCase({ vars: [varRow("", "")], expected: "", tags: "", messages: "[]" })).toEqual({
      ok: true,
      value: { vars: {} },
    });
  });

  it("a new case gets a row for each of the dataset's variables", () => {
    expect(caseToForm(null, ["customer", "plan"]).vars.map((r) => r.name)).toEqual(["customer", "plan"]);
    expect(caseToForm(null).vars.map((r) => r.name)).toEqual([""]);
  });

  it("names what is wrong by the field that shows it", () => {
    const result = formToCase({
      vars: [varRow("a", "1"), varRow("a", "2"), varRow("", "x")],
      expected: "",
      tags: "",
      messages: "{",
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.field}: ${e.message.split(":")[0]}`)).toEqual([
      'vars: "a" is named twice',
      "vars: row 3 has a value but no name",
      "messages: is not valid JSON",
    ]);
    const notList = formToCase({ vars: [], expected: "", tags: "", messages: '{"role":"user"}' });
    expect(notList.ok ? null : notList.errors[0]?.field).toBe("messages");
  });

  it("the list a save sends: the case replaced or removed in its place", () => {
    const a = { vars: { n: "a" } };
    const b = { vars: { n: "b" } };
    const c = { vars: { n: "c" } };
    expect(editedList([a, b, c], 1, { vars: { n: "B" } })).toEqual([a, { vars: { n: "B" } }, c]);
    expect(editedList([a, b, c], 0, null)).toEqual([b, c]);
    expect(() => editedList([a], 3, null)).toThrow(RangeError);
  });

  it("a refusal of the whole list lands on the edited case's field", () => {
    expect(fieldOfEditedCase("cases[12].vars.company", 12)).toBe("vars");
    expect(fieldOfEditedCase("cases[12].messages[0].role", 12)).toBe("messages");
    expect(fieldOfEditedCase("cases[3].expected", 12)).toBe("cases[3].expected");
    expect(fieldOfEditedCase("cases[12]", 12)).toBeNull();
    expect(fieldOfEditedCase(null, 12)).toBeNull();
  });
});
