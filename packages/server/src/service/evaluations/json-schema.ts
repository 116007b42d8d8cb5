/**
 * The `json_schema` check (issue 38, docs/evaluations.md "Checks"): the answer, parsed as JSON, against a JSON
 * Schema. The schema is a user's and untrusted, so:
 * - every `pattern` and `patternProperties` key runs on RE2 (core's `compilePattern`: linear time whatever the
 *   answer), so no pattern can backtrack for ever; a pattern RE2 does not take is refused when compiled;
 * - `uniqueItems` is decided in linear time (canonical JSON of each item in a set) instead of Ajv's pairwise
 *   comparison, quadratic in the array's length;
 * - `format` is an annotation (not asserted): a format's own expression is not ours to bound;
 * - `$ref` resolves inside the schema only: nothing is fetched;
 * - compiling is paid once per schema: validators are kept by the SHA-256 of the schema's canonical JSON, at
 *   most SCHEMA_CACHE entries and SCHEMA_CACHE_CHARS characters of schema (least recently used first out).
 */
import { compilePattern } from "@promptstore/core/evaluations/checks";
import type { Verdict } from "@promptstore/core/evaluations/verdicts";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import AjvDraft07Module, { type ErrorObject, type Options, type ValidateFunction } from "ajv";
import Ajv2019Module from "ajv/dist/2019.js";
import Ajv2020Module from "ajv/dist/2020.js";
import type AjvCore from "ajv/dist/core.js";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import { LRUCache } from "lru-cache";

// CommonJS modules whose typings declare a default export: the class is `.default` on both sides.
const AjvDraft07 = AjvDraft07Module.default;
const Ajv2019 = Ajv2019Module.default;
const Ajv2020 = Ajv2020Module.default;
type AnyAjv = AjvCore.default;

export const SCHEMA_CACHE = 500;
export const SCHEMA_CACHE_CHARS = 20_000_000;
/** The most of a reason: an error's message may quote the schema (an enum, a pattern). */
const REASON_LENGTH = 300;
/** The most of the failing path named (a key may be as long as the answer). */
const POINTER_LENGTH = 200;

/** Ajv's RegExp engine, on RE2: `test` is an unanchored search, as RegExp's. */
const re2Engine: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const compiled = compilePattern(pattern);
    if (typeof compiled === "string") throw new Error(`pattern ${JSON.stringify(pattern.slice(0, 100))} ${compiled}`);
    return {
      test: (text: string) => compiled.matcher(text).find(),
      // Ajv keeps one compiled pattern per distinct `toString()`: it must name the pattern.
      toString: () => `/${pattern}/${flags}`,
    };
  },
  { code: "re2" },
);

/** A `uniqueItems` in linear time: two items are equal when their canonical JSON is (as Ajv's deep equality). */
function uniqueItems(this: unknown, schema: boolean, data: unknown[]): boolean {
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (let i = 0; i < data.length; i++) {
    const key = canonical(data[i]);
    const first = seen.get(key);
    if (first !== undefined) {
      (uniqueItems as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${first} and ${i} are identical)`,
          params: { i: first, j: i },
        },
      ];
      return false;
    }
    seen.set(key, i);
  }
  return true;
}

const OPTIONS: Options = {
  // Unknown keywords are ignored, as JSON Schema says (a `title`, an `example`, a vendor's own).
  strict: false,
  logger: false,
  validateFormats: false,
  allErrors: false,
  code: { regExp: re2Engine },
};

function instance(Class: new (options: Options) => AnyAjv): AnyAjv {
  const ajv = new Class(OPTIONS);
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: true, validate: uniqueItems });
  return ajv;
}

/** The dialects taken, by `$schema`; none is 2020-12. */
const DIALECTS: Record<string, () => AnyAjv> = {
  "2020-12": () => instance(Ajv2020),
  "2019-09": () => instance(Ajv2019),
  "draft-07": () => instance(AjvDraft07),
};

function dialectOf(schema: Record<string, unknown>): string | { error: string } {
  const declared = schema.$schema;
  if (declared === undefined) return "2020-12";
  if (typeof declared !== "string") return { error: "$schema: must be a string" };
  const bare = declared.replace(/#$/, "");
  if (bare === "https://json-schema.org/draft/2020-12/schema") return "2020-12";
  if (bare === "https://json-schema.org/draft/2019-09/schema") return "2019-09";
  if (bare === "http://json-schema.org/draft-07/schema" || bare === "https://json-schema.org/draft-07/schema") {
    return "draft-07";
  }
  return {
    error: `$schema: ${JSON.stringify(declared.slice(0, 100))} is not one of draft-07, 2019-09, 2020-12 (none means 2020-12)`,
  };
}

type Compiled = { validate: ValidateFunction } | { error: string };

const cut = (text: string) => (text.length > REASON_LENGTH ? `${text.slice(0, REASON_LENGTH)}…` : text);

/** Where an error is, as a JSON Pointer into the answer (`(root)` for the whole answer), and what it says. */
function describe(error: ErrorObject): string {
  const path = error.instancePath;
  const where = path === "" ? "(root)" : path.length > POINTER_LENGTH ? `${path.slice(0, POINTER_LENGTH)}…` : path;
  let what = error.message ?? `fails ${error.keyword}`;
  if (error.keyword === "additionalProperties") {
    what += ` (${JSON.stringify(String((error.params as { additionalProperty?: unknown }).additionalProperty))})`;
  }
  return cut(`${where}: ${what}`);
}

/** Compiled validators, kept by the schema's hash. */
export class SchemaValidators {
  private readonly ajv = new Map<string, AnyAjv>();
  private readonly cache = new LRUCache<string, Compiled>({
    max: SCHEMA_CACHE,
    maxSize: SCHEMA_CACHE_CHARS,
    sizeCalculation: (_value, key) => Number(key.slice(0, key.indexOf(":"))) || 1,
  });

  private ajvFor(dialect: string): AnyAjv {
    let ajv = this.ajv.get(dialect);
    if (!ajv) {
      ajv = (DIALECTS[dialect] as () => AnyAjv)();
      this.ajv.set(dialect, ajv);
    }
    return ajv;
  }

  /** The schema's validator, or why it does not compile (a message for `<field>: <message>`). */
  compile(schema: Record<string, unknown>): Compiled {
    const json = canonical(schema);
    const key = `${json.length}:${sha256Hex(json)}`;
    const kept = this.cache.get(key);
    if (kept) return kept;
    const compiled = this.compileNew(schema);
    this.cache.set(key, compiled);
    return compiled;
  }

  private compileNew(schema: Record<string, unknown>): Compiled {
    const dialect = dialectOf(schema);
    if (typeof dialect !== "string") return dialect;
    const ajv = this.ajvFor(dialect);
    // Ajv keeps what it compiles (by object, and by `$id`); the validator is ours to keep, so it forgets it
    // at once: two schemas with one `$id` do not collide, and nothing grows but this cache.
    const own = structuredClone(schema);
    try {
      return { validate: ajv.compile(own) };
    } catch (error) {
      return { error: cut(`does not compile: ${(error as Error).message}`) };
    } finally {
      try {
        ajv.removeSchema(own);
      } catch {
        // not added: nothing to forget
      }
    }
  }

  get size(): number {
    return this.cache.size;
  }
}

/**
 * The schema of a version's `response_format`, when it is OpenAI's `{ type: "json_schema", json_schema:
 * { schema } }`; undefined otherwise.
 */
export function responseFormatSchema(responseFormat: unknown): Record<string, unknown> | undefined {
  if (typeof responseFormat !== "object" || responseFormat === null) return undefined;
  const format = responseFormat as { type?: unknown; json_schema?: { schema?: unknown } };
  if (format.type !== "json_schema") return undefined;
  const schema = format.json_schema?.schema;
  return typeof schema === "object" && schema !== null && !Array.isArray(schema)
    ? (schema as Record<string, unknown>)
    : undefined;
}

/** The verdict of an answer's content against a compiled schema. */
export function schemaVerdict(validate: ValidateFunction, content: string): Verdict {
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch (error) {
    return { pass: false, score: 0, reason: cut(`not JSON: ${(error as Error).message}`) };
  }
  if (validate(data)) return { pass: true, score: 1, reason: "matches the schema" };
  const first = validate.errors?.[0];
  return { pass: false, score: 0, reason: first ? describe(first) : "does not match the schema" };
}
