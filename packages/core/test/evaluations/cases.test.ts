import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { caseId, caseJson, DatasetHasher, datasetCase, normalCase } from "../../src/evaluations/cases.js";

const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("dataset cases: one form per meaning, named by their content", () => {
  it("a case's canonical JSON and id, exactly", () => {
    const json = caseJson(
      normalCase(datasetCase.parse({ vars: { name: "Ada", company: "Acme" }, expected: "Hi Ada" })),
    );
    expect(json).toBe('{"expected":"Hi Ada","vars":{"company":"Acme","name":"Ada"}}');
    expect(caseId(json)).toBe(sha(json));
  });

  it("two ways of writing one case are one case: no vars is {}, empty lists are none, tags a sorted set", () => {
    const a = caseJson(normalCase(datasetCase.parse({ tags: ["b", "a", "b"], messages: [] })));
    const b = caseJson(normalCase(datasetCase.parse({ vars: {}, tags: ["a", "b"] })));
    expect(a).toBe('{"tags":["a","b"],"vars":{}}');
    expect(b).toBe(a);
    expect(caseJson(normalCase(datasetCase.parse({ tags: [] })))).toBe('{"vars":{}}');
  });

  it("a dataset version is the SHA-256 of the canonical array of its cases, hashed one case at a time", () => {
    const cases = [{ vars: { q: "1" } }, { vars: { q: "2" }, expected: "two" }, { vars: {} }].map((c) =>
      caseJson(normalCase(datasetCase.parse(c))),
    );
    const hasher = new DatasetHasher();
    for (const json of cases) hasher.add(json);
    expect(hasher.size).toBe(3);
    expect(hasher.digest()).toBe(sha(`[${cases.join(",")}]`));
    expect(sha(`[${cases.join(",")}]`)).toBe(
      sha('[{"vars":{"q":"1"}},{"expected":"two","vars":{"q":"2"}},{"vars":{}}]'),
    );
    expect(new DatasetHasher().digest()).toBe(sha("[]"));
  });

  it("refuses what a case cannot hold, naming the field", () => {
    const problems = (value: unknown) =>
      datasetCase.safeParse(value).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];
    expect(problems({ vars: { company: 3 } })).toEqual(["vars.company: must be a string, not a number"]);
    expect(problems({ vars: {}, expected: 7 })).toEqual(["expected: must be a string, not a number"]);
    expect(problems({ tags: [""] })).toEqual(["tags.0: must not be empty"]);
    expect(problems({ vars: {}, extra: 1 })[0]).toMatch(/^: /);
    expect(problems({ messages: [{ role: "system", content: "x" }] })[0]).toMatch(/^messages\.0/);
    expect(problems({ vars: { a: "x".repeat(60_000), b: "y".repeat(60_000) } })).toEqual([
      ": is 120024 bytes as canonical JSON; a case holds at most 102400",
    ]);
  });
});
