import type { Check } from "@promptstore/core/evaluations/checks";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import { SchemaValidators } from "../../src/service/evaluations/json-schema.js";
import type { OpenConnection } from "../../src/service/playground/connection-service.js";
import { unlimitedCaller, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { cell, checkRunner, refusal, says } from "./checks-support.js";

/** No judge in these sets: the connection is never opened. */
const NO_CONNECTION: OpenConnection = { id: "con_000000000000000000000000", baseUrl: "", apiKey: null, models: [] };

const PERSON = {
  type: "object",
  properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 } },
  required: ["name", "age"],
  additionalProperties: false,
};

const notJson = (text: string) => {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("parses");
};

describe.each(DATABASES)("json_schema checks ($name)", (database) => {
  const t = useTestApp(database);

  const decide = async (checks: Check[], content: string | null, extra: Parameters<typeof cell>[2] = {}) => {
    const runner = checkRunner(t);
    const prepared = await runner.prepare(await unlimitedCaller(t), checks, NO_CONNECTION);
    return runner.run(prepared, cell(says(content), {}, extra));
  };

  it("passes an answer that matches the check's schema, and names the first failing path of one that does not", async () => {
    const check: Check[] = [{ type: "json_schema", schema: PERSON }];
    expect(await decide(check, '{"name":"Ada","age":36}')).toEqual([
      { pass: true, score: 1, reason: "matches the schema" },
    ]);
    expect(await decide(check, '{"name":"Ada","age":36.5}')).toEqual([
      { pass: false, score: 0, reason: "/age: must be integer" },
    ]);
    expect(await decide(check, '{"name":"Ada","age":-1}')).toEqual([
      { pass: false, score: 0, reason: "/age: must be >= 0" },
    ]);
    expect(await decide(check, '{"name":"Ada"}')).toEqual([
      { pass: false, score: 0, reason: "(root): must have required property 'age'" },
    ]);
    expect(await decide(check, '{"name":"Ada","age":1,"nick":"A"}')).toEqual([
      { pass: false, score: 0, reason: '(root): must NOT have additional properties ("nick")' },
    ]);
    expect(await decide(check, "Ada, 36")).toEqual([
      { pass: false, score: 0, reason: `not JSON: ${notJson("Ada, 36")}` },
    ]);
    // An answer without text (a tool call alone) is not JSON either.
    expect(await decide(check, null)).toEqual([{ pass: false, score: 0, reason: `not JSON: ${notJson("")}` }]);
  });

  it("without a schema of its own, uses the version's response_format schema; with neither it is an error", async () => {
    const check: Check[] = [{ type: "json_schema" }];
    const responseFormat = {
      type: "json_schema",
      json_schema: { name: "people", schema: { type: "array", items: PERSON } },
    };
    expect(await decide(check, '[{"name":"Ada","age":36}]', { responseFormat })).toEqual([
      { pass: true, score: 1, reason: "matches the schema" },
    ]);
    expect(await decide(check, '[{"name":"Ada","age":"36"}]', { responseFormat })).toEqual([
      { pass: false, score: 0, reason: "/0/age: must be integer" },
    ]);
    // The check's own schema wins over the version's.
    expect(
      await decide([{ type: "json_schema", schema: { type: "object" } }], '[{"name":"Ada","age":36}]', {
        responseFormat,
      }),
    ).toEqual([{ pass: false, score: 0, reason: "(root): must be object" }]);
    const none = {
      error:
        'json_schema: no schema: the check gives none and the version\'s response_format is not { "type": "json_schema", "json_schema": { "schema": … } }',
    };
    expect(await decide(check, "[]")).toEqual([none]);
    expect(await decide(check, "[]", { responseFormat: { type: "json_object" } })).toEqual([none]);
    // A version's schema that does not compile is an error of the cell, not a refusal of the set.
    expect(
      await decide(check, "[]", {
        responseFormat: { type: "json_schema", json_schema: { name: "x", schema: { type: "list" } } },
      }),
    ).toEqual([
      {
        error:
          "json_schema: the version's response_format schema does not compile: schema is invalid: data/type must be equal to one of the allowed values, data/type must be array, data/type must match a schema in anyOf",
      },
    ]);
  });

  it("refuses at prepare a schema that does not compile, naming the check's field", async () => {
    const caller = await unlimitedCaller(t);
    const prepare = (schema: Record<string, unknown>) =>
      refusal(checkRunner(t).prepare(caller, [{ type: "json" }, { type: "json_schema", schema }], NO_CONNECTION));
    expect(await prepare({ type: "strin" })).toEqual({
      status: 400,
      message:
        "checks[1].schema: does not compile: schema is invalid: data/type must be equal to one of the allowed values, data/type must be array, data/type must match a schema in anyOf",
    });
    // A pattern RE2 does not take (lookahead, backreference) is refused, not run on a backtracking engine.
    expect(await prepare({ type: "string", pattern: "^(?=a)" })).toEqual({
      status: 400,
      message:
        'checks[1].schema: does not compile: pattern "^(?=a)" is not a pattern RE2 takes: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
    });
    expect(await prepare({ type: "object", patternProperties: { "(a)\\1": {} } })).toEqual({
      status: 400,
      message:
        'checks[1].schema: does not compile: pattern "(a)\\\\1" is not a pattern RE2 takes: error parsing regexp: invalid escape sequence: `\\1`',
    });
    // Nothing is fetched: a reference outside the schema does not resolve.
    expect(await prepare({ $ref: "https://schemas.example.com/person.json" })).toEqual({
      status: 400,
      message:
        "checks[1].schema: does not compile: can't resolve reference https://schemas.example.com/person.json from id #",
    });
    expect(await prepare({ $schema: "http://json-schema.org/draft-04/schema#" })).toEqual({
      status: 400,
      message:
        'checks[1].schema: $schema: "http://json-schema.org/draft-04/schema#" is not one of draft-07, 2019-09, 2020-12 (none means 2020-12)',
    });
  });

  it("takes draft-07, 2019-09 and 2020-12 (the default), and ignores what it does not know (format, title, vendor keywords)", async () => {
    const tuple07 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "array",
      items: [{ type: "string" }, { type: "integer" }],
    };
    expect(await decide([{ type: "json_schema", schema: tuple07 }], '["a", 1]')).toEqual([
      { pass: true, score: 1, reason: "matches the schema" },
    ]);
    expect(await decide([{ type: "json_schema", schema: tuple07 }], '["a", "b"]')).toEqual([
      { pass: false, score: 0, reason: "/1: must be integer" },
    ]);
    const tuple2020 = { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }] };
    expect(await decide([{ type: "json_schema", schema: tuple2020 }], '["a", "b"]')).toEqual([
      { pass: false, score: 0, reason: "/1: must be integer" },
    ]);
    const loose = {
      $schema: "https://json-schema.org/draft/2019-09/schema",
      title: "An e-mail",
      type: "string",
      format: "email",
      "x-vendor": true,
    };
    expect(await decide([{ type: "json_schema", schema: loose }], '"not an address"')).toEqual([
      { pass: true, score: 1, reason: "matches the schema" },
    ]);
  });

  it("runs a catastrophic-backtracking pattern against a long answer in linear time (RE2)", async () => {
    // On a backtracking engine, ^(a+)+$ against 30 a's and a '!' takes minutes; here 100 000 of them.
    const long = `${"a".repeat(100_000)}!`;
    const checks: Check[] = [
      { type: "json_schema", schema: { type: "string", pattern: "^(a+)+$" } },
      { type: "json_schema", schema: { type: "object", patternProperties: { "^(a|aa)+$": { type: "integer" } } } },
    ];
    const runner = checkRunner(t);
    const prepared = await runner.prepare(await unlimitedCaller(t), checks, NO_CONNECTION);
    expect(await runner.run(prepared, cell(says(JSON.stringify(long))))).toEqual([
      { pass: false, score: 0, reason: '(root): must match pattern "^(a+)+$"' },
      { pass: false, score: 0, reason: "(root): must be object" },
    ]);
    const key = JSON.stringify({ [long]: "x", [`${"a".repeat(1000)}`]: "y" });
    expect(await runner.run(prepared, cell(says(key)))).toEqual([
      { pass: false, score: 0, reason: "(root): must be string" },
      // The path is named up to 200 characters.
      { pass: false, score: 0, reason: `/${"a".repeat(199)}…: must be integer` },
    ]);
  });

  it("decides uniqueItems in linear time, items equal as JSON whatever their keys' order", async () => {
    const check: Check[] = [{ type: "json_schema", schema: { type: "array", uniqueItems: true } }];
    expect(await decide(check, '[{"a":1,"b":[2,{"c":3}]}, 1, {"b":[2,{"c":3}],"a":1}]')).toEqual([
      { pass: false, score: 0, reason: "(root): must NOT have duplicate items (items ## 0 and 2 are identical)" },
    ]);
    // 50 000 distinct objects: pairwise, 1.25 billion comparisons.
    const many = JSON.stringify(Array.from({ length: 50_000 }, (_, i) => ({ id: i })));
    expect(await decide(check, many)).toEqual([{ pass: true, score: 1, reason: "matches the schema" }]);
    expect(await decide([{ type: "json_schema", schema: { type: "array", uniqueItems: false } }], "[1,1]")).toEqual([
      { pass: true, score: 1, reason: "matches the schema" },
    ]);
  });

  it("compiles a schema once (kept by its canonical hash); schemas sharing an $id do not collide", async () => {
    const validators = new SchemaValidators();
    const runner = checkRunner(t, { validators });
    const caller = await unlimitedCaller(t);
    const a = { $id: "https://example.com/s", type: "string" };
    const b = { type: "integer", $id: "https://example.com/s" };
    const first = await runner.prepare(caller, [{ type: "json_schema", schema: a }], NO_CONNECTION);
    // The same schema, its keys in another order: the same content.
    await runner.prepare(caller, [{ type: "json_schema", schema: { type: "string", $id: a.$id } }], NO_CONNECTION);
    expect(validators.size).toBe(1);
    const second = await runner.prepare(caller, [{ type: "json_schema", schema: b }], NO_CONNECTION);
    expect(validators.size).toBe(2);
    expect(await runner.run(first, cell(says('"x"')))).toEqual([
      { pass: true, score: 1, reason: "matches the schema" },
    ]);
    expect(await runner.run(second, cell(says('"x"')))).toEqual([
      { pass: false, score: 0, reason: "(root): must be integer" },
    ]);
    // The check set's hash is the SHA-256 of its canonical JSON: nothing to pin here.
    expect(first.checks).toEqual([{ type: "json_schema", schema: a }]);
    expect(first.names).toEqual(["json_schema"]);
    expect(first.hash).toBe(sha256Hex(canonical([{ type: "json_schema", schema: a }])));
  });

  it("runs the local checks through core, one outcome per check, in order", async () => {
    const checks: Check[] = [
      { type: "contains", value: "Ada" },
      { type: "json_schema", schema: { type: "object" } },
      { type: "max_chars", value: 3 },
      { type: "expected", trim: true },
    ];
    const runner = checkRunner(t);
    const prepared = await runner.prepare(await unlimitedCaller(t), checks, NO_CONNECTION);
    expect(prepared.names).toEqual(["contains", "json_schema", "max_chars", "expected"]);
    expect(await runner.run(prepared, cell(says('{"n":"Ada"}'), { expected: ' {"n":"Ada"} ' }))).toEqual([
      { pass: true, score: 1, reason: 'contains "Ada"' },
      { pass: true, score: 1, reason: "matches the schema" },
      { pass: false, score: 0, reason: "11 characters, at most 3" },
      { pass: true, score: 1, reason: "equal" },
    ]);
  });
});
