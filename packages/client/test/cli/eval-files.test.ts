import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { datasetFileOf, datasetNameOf } from "../../cli/git/dataset-file.js";
import { JUnitWriter, xmlAttribute, xmlText } from "../../cli/git/junit.js";

/** The files `eval` and the dataset commands write, on their own: names, and XML that any reader takes. */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("dataset file names", () => {
  it("keeps a plain name, %-encodes what a file system may refuse or misread, and reads every one back", () => {
    const names: [string, string][] = [
      ["customers", "datasets/customers.jsonl"],
      ["Support FAQ (v2)", "datasets/Support FAQ (v2).jsonl"],
      ["team/faq: v2", "datasets/team%2Ffaq%3A v2.jsonl"],
      ["100% sure", "datasets/100%25 sure.jsonl"],
      [".hidden", "datasets/%2Ehidden.jsonl"],
      ['a\\b*c?d"e<f>g|h', "datasets/a%5Cb%2Ac%3Fd%22e%3Cf%3Eg%7Ch.jsonl"],
      ["tab\there", "datasets/tab%09here.jsonl"],
      ["日本語 ✓", "datasets/日本語 ✓.jsonl"],
    ];
    for (const [name, file] of names) {
      expect(datasetFileOf(name)).toBe(file);
      expect(datasetNameOf(file.slice("datasets/".length))).toBe(name);
    }
    expect(datasetNameOf("notes.txt")).toBeUndefined();
    expect(datasetNameOf(".jsonl")).toBeUndefined();
    expect(() => datasetNameOf("bad%zz.jsonl")).toThrow(
      "datasets/bad%zz.jsonl: the name is not valid: a % must be followed by two hex digits",
    );
  });
});

describe("JUnit XML", () => {
  it("escapes text and attributes; characters XML cannot hold are shown, not written", () => {
    expect(xmlText(`a < b && c > d "q" 'a'`)).toBe(`a &lt; b &amp;&amp; c &gt; d "q" 'a'`);
    expect(xmlText("]]>")).toBe("]]&gt;");
    expect(xmlAttribute(`say "hi" & 'bye'\nnext\tcol\r`)).toBe(
      "say &quot;hi&quot; &amp; &apos;bye&apos;&#10;next&#9;col&#13;",
    );
    expect(xmlText("nul\u0000 bell\u0007 esc\u001b ok\ttab")).toBe("nul\\u0000 bell\\u0007 esc\\u001B ok\ttab");
    expect(xmlText("lone \ud800 and \udc00; pair 🎉; \ufffe")).toBe("lone \\uD800 and \\uDC00; pair 🎉; \\uFFFE");
  });

  it("writes the suites with counts counted from the cases, and leaves no part file behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-junit-"));
    dirs.push(dir);
    const file = join(dir, "out.xml");
    const writer = new JUnitWriter(file);
    await writer.startSuite({ name: "support", timestamp: "2026-01-02T03:04:05", properties: { evaluation: "ev_1" } });
    await writer.addCase("#0 ok", "promptstore.support", 12, { kind: "passed" });
    await writer.addCase("#1 <bad>", "promptstore.support", 1500, {
      kind: "failed",
      message: 'expected: got "x"',
      type: "regression",
      details: 'expected: got "x"\n\nanswer:\n<x> & y',
    });
    await writer.addCase("#2", "promptstore.support", null, {
      kind: "errored",
      message: "timeout",
      type: "provider_timeout",
      details: "timeout",
    });
    await writer.startSuite({ name: "other", timestamp: "2026-01-02T03:04:05", properties: {} });
    await writer.addCase("#0", "promptstore.other", null, { kind: "skipped", message: "not judged" });
    await writer.finish();
    expect(readdirSync(dir)).toEqual(["out.xml"]);
    expect(writer.counts()).toEqual([
      { name: "support", tests: 3, failures: 1, errors: 1, skipped: 0 },
      { name: "other", tests: 1, failures: 0, errors: 0, skipped: 1 },
    ]);
    expect(readFileSync(file, "utf8")).toBe(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="promptstore eval" tests="4" failures="1" errors="1" skipped="1" time="1.512">
  <testsuite name="support" id="0" tests="3" failures="1" errors="1" skipped="0" time="1.512" timestamp="2026-01-02T03:04:05">
    <properties>
      <property name="evaluation" value="ev_1"/>
    </properties>
    <testcase name="#0 ok" classname="promptstore.support" time="0.012"/>
    <testcase name="#1 &lt;bad&gt;" classname="promptstore.support" time="1.500">
      <failure message="expected: got &quot;x&quot;" type="regression">expected: got "x"

answer:
&lt;x&gt; &amp; y</failure>
    </testcase>
    <testcase name="#2" classname="promptstore.support" time="0.000">
      <error message="timeout" type="provider_timeout">timeout</error>
    </testcase>
  </testsuite>
  <testsuite name="other" id="1" tests="1" failures="0" errors="0" skipped="1" time="0.000" timestamp="2026-01-02T03:04:05">
    <testcase name="#0" classname="promptstore.other" time="0.000">
      <skipped message="not judged"/>
    </testcase>
  </testsuite>
</testsuites>
`);
  });
});
