/**
 * What the property-based tests send (fast-check arbitraries for hostile requests) and what they check
 * afterwards (a dump of every table, the envelope, the other project's marker).
 */

import fc from "fast-check";
import { sql } from "kysely";
import { tablesOf } from "../../src/store/backup.js";
import type { Store } from "../../src/store/index.js";

/** A generated request, as app.inject takes it. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string | Buffer;
}

/** Ids, hashes and names the generators draw from: the seeded ones and the other project's. */
export interface FuzzWorld {
  mainProjectId: string;
  otherProjectId: string;
  orgId: string;
  otherOrgId: string;
  key: string;
  /** A read-scoped key of the main project: every write it asks for is a 403 that changes nothing. */
  readKey: string;
  /** Prompt ids: the main project's, the other project's, and ones that exist nowhere. */
  promptIds: string[];
  hashes: string[];
  webhookIds: string[];
  keyIds: string[];
  userIds: string[];
  session: { cookie: string; csrf: string };
}

// ---- strings ----

const LONE_SURROGATES = ["\ud800", "\udfff", "a\ud800b", "\udc00\ud800"];
const NASTY = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\u202e",
  "\ufeff",
  "𝕏",
  "\r\n",
  "{{",
  "}}",
  "{{ x }",
  "{{{{a}}}}",
  "</Role>",
  "<Role>",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "../../etc/passwd",
  "..\\..\\windows",
  "%00",
  "%2e%2e%2f",
  "' OR 1=1 --",
  '"; DROP TABLE prompts; --',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the text a log4j-style injection sends
  "${jndi:ldap://x}",
  "NaN",
  "null",
  "-1",
  "1e309",
  ...LONE_SURROGATES,
];

/** Strings a service chokes on: Unicode edge cases, lone surrogates, NUL, injection-shaped, long. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  // fast-check's "binary" units are whole code points; a lone surrogate needs its own generator.
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 8 }))
      .map(([a, s, b]) => a + String.fromCharCode(s) + b),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("a", "é", "\u0000", "{{", "x"), fc.integer({ min: 1_000, max: 120_000 }))
      .map(([c, n]) => c.repeat(n)),
  },
);

// ---- JSON values and bodies ----

/** Any JSON value, with nasty strings and keys, including `__proto__` and `constructor`. */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    nastyString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(nastyString, fc.constantFrom("__proto__", "constructor", "prototype")), tie("value"), {
      maxKeys: 4,
    }),
  ),
})).value;

/**
 * JSON text for a value. JSON.stringify writes `__proto__` keys as own keys (they came from
 * fc.dictionary, which defines them), so the server sees them in the text as an attacker would send them.
 */
const toJson = (value: unknown): string => JSON.stringify(value) ?? "null";

/** A value nested `depth` levels deep, as text (deeper than JSON.stringify can walk). */
const deepText = fc
  .tuple(fc.integer({ min: 30, max: 5_000 }), fc.constantFrom(["[", "]"], ['{"a":', "}"], ['{"__proto__":', "}"]))
  .map(([depth, [open, close]]) => `${open.repeat(depth)}1${close.repeat(depth)}`);

const section = fc.record(
  {
    title: fc.oneof(nastyString, jsonValue, fc.constantFrom("Role", "Output Format", "</Role>", "<x>", "1abc")),
    content: fc.oneof(nastyString, jsonValue, fc.constant("Hello {{ name }}")),
    enabled: fc.oneof(fc.boolean(), jsonValue),
  },
  { requiredKeys: [] },
);

const tool = fc.record(
  {
    type: fc.oneof(fc.constant("function"), jsonValue),
    function: fc.record(
      {
        name: fc.oneof(fc.constantFrom("lookup", "__proto__", "toString", "a".repeat(65)), nastyString),
        description: fc.oneof(nastyString, jsonValue),
        parameters: fc.oneof(fc.constant({ type: "object" }), jsonValue),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

/** Model settings: mostly in range, with hostile names, deep `extra`, unknown keys and every response format. */
const modelSettings = fc.record(
  {
    name: fc.oneof(fc.constantFrom("gpt-4o", "__proto__", " ", "m".repeat(201)), nastyString),
    temperature: fc.oneof(fc.double({ min: -1, max: 3, noNaN: true }), jsonValue),
    top_p: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), jsonValue),
    max_output_tokens: fc.oneof(fc.integer({ min: -1, max: 2_000_000 }), jsonValue),
    stop: fc.oneof(fc.array(fc.oneof(fc.constant("END"), nastyString), { maxLength: 6 }), jsonValue),
    response_format: fc.oneof(
      fc.constantFrom({ type: "text" }, { type: "json_object" }, { type: "xml" }),
      fc.record({
        type: fc.constant("json_schema"),
        json_schema: fc.record(
          {
            name: fc.oneof(fc.constant("answer"), nastyString),
            schema: jsonValue,
            strict: fc.oneof(fc.boolean(), jsonValue),
          },
          { requiredKeys: [] },
        ),
      }),
      jsonValue,
    ),
    extra: fc.oneof(fc.constant({ seed: 1 }), jsonValue),
    seed: jsonValue,
  },
  { requiredKeys: [] },
);

/** Mostly a valid value, sometimes a hostile string, sometimes a value of any type. */
const mostly = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 2, arbitrary: nastyString }, { weight: 1, arbitrary: jsonValue });

const plainText = fc.string({ minLength: 1, maxLength: 40 });
const validSection = fc.record(
  { title: mostly(plainText), content: mostly(plainText), enabled: mostly(fc.boolean()) },
  { requiredKeys: ["title", "content"] },
);

/**
 * Near-valid bodies, one kind per family of routes (the schemas are strict: a key of another kind is a 400
 * before anything else is looked at), each field mostly valid so that requests get past validation too.
 */
const bodyObject = (ids: string[]) =>
  fc.oneof(
    fc.record(
      {
        id: mostly(fc.constantFrom(...ids, "fresh-id")),
        name: mostly(plainText),
        description: mostly(plainText),
        sections: mostly(fc.array(validSection, { minLength: 1, maxLength: 3 })),
        tools: mostly(fc.array(tool, { maxLength: 2 })),
        model: mostly(modelSettings),
        message: mostly(plainText),
        publish: mostly(fc.boolean()),
        base_version: mostly(versionRef([])),
      },
      { requiredKeys: ["name", "sections"] },
    ),
    fc.record(
      {
        name: mostly(plainText),
        markdown: mostly(fc.constantFrom("# A\nx", "text\n# A\ny", "```\n# no\n```", "# </A>\n{{ x }}")),
        model: mostly(fc.record({ name: plainText, temperature: fc.double({ min: 0, max: 2, noNaN: true }) })),
        publish: mostly(fc.boolean()),
      },
      { requiredKeys: ["markdown"] },
    ),
    fc.record({ version: mostly(versionRef([])) }, { requiredKeys: [] }),
    // POST /api/v2/import: versions whose hashes rarely match their content (a 400), pointers at anything.
    fc.record(
      {
        id: mostly(fc.constantFrom(...ids, "fresh-id")),
        name: mostly(plainText),
        created_at: mostly(fc.constantFrom("2025-01-01T00:00:00.000Z", "yesterday", "2025-13-40T99:99:99Z")),
        versions: mostly(
          fc.array(
            fc.record(
              {
                version: mostly(versionRef([])),
                message: mostly(plainText),
                created_at: mostly(fc.constantFrom("2025-01-01T00:00:00.000Z", "")),
                saved_by: mostly(plainText),
                sections: mostly(fc.array(validSection, { minLength: 1, maxLength: 2 })),
                model: mostly(modelSettings),
              },
              { requiredKeys: ["version", "created_at", "sections"] },
            ),
            { maxLength: 3 },
          ),
        ),
        latest_version: mostly(versionRef([])),
        production_version: mostly(versionRef([])),
      },
      { requiredKeys: ["id", "name", "versions"] },
    ),
    fc.record(
      {
        url: mostly(
          fc.constantFrom(
            "https://example.com/hook",
            "http://127.0.0.1/x",
            "javascript:alert(1)",
            "file:///etc/passwd",
          ),
        ),
        description: mostly(plainText),
        events: mostly(fc.constantFrom(["prompt.published"], ["prompt.saved", "prompt.deleted"], ["*"], [])),
        enabled: mostly(fc.constant(false)),
      },
      { requiredKeys: ["url"] },
    ),
    fc.record(
      {
        email: mostly(fc.constantFrom("owner@promptstore.local", "someone@example.com")),
        password: mostly(plainText),
        role: mostly(fc.constantFrom("owner", "editor", "viewer", "admin")),
        name: mostly(plainText),
        current_password: mostly(plainText),
        new_password: mostly(plainText),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.oneof(nastyString, fc.constantFrom("__proto__", "constructor", "sections", "name")), jsonValue, {
      maxKeys: 5,
    }),
  );

/** A request body as bytes: JSON of any shape, near-valid bodies, deep nesting, broken JSON, raw bytes. */
export const bodyText = (ids: string[]): fc.Arbitrary<string | Buffer> =>
  fc.oneof(
    { weight: 6, arbitrary: bodyObject(ids).map(toJson) },
    { weight: 2, arbitrary: jsonValue.map(toJson) },
    { weight: 1, arbitrary: deepText },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"__proto__":{"admin":true},"name":"x","sections":[{"title":"a","content":"b"}]}',
        '{"constructor":{"prototype":{"x":1}},"name":"x","markdown":"# A\\nb"}',
        '{"name":"a\\ud800b","markdown":"# A\\nb"}',
        '{"name":"x","markdown":"# A\\n\\u0000"}',
        "{",
        "[1,",
        '{"a":1,"a":2}',
        "null",
        '"string"',
        "\u0000",
        "",
        "   ",
        "{'single':1}",
      ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  );

// ---- URLs ----

/** Version references: the keywords, real hashes and their prefixes, random hex of every length, junk. */
export const versionRef = (hashes: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom("production", "latest", "PRODUCTION", "", "draft"),
    ...(hashes.length > 0
      ? [
          fc.constantFrom(...hashes),
          fc.tuple(fc.constantFrom(...hashes), fc.integer({ min: 1, max: 64 })).map(([h, n]) => h.slice(0, n)),
          fc.constantFrom(...hashes).map((h) => h.toUpperCase()),
        ]
      : []),
    fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 0, maxLength: 70 }),
    nastyString,
  );

/** An id as it goes into a path: real, other project's, traversal, percent-encoded, broken encoding, huge. */
export const pathId = (ids: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "..",
        "%2e%2e",
        "..%2f..%2fhealthz",
        "%2e%2e%2f%2e%2e%2fapi%2fv2%2fprompts",
        "..%5c..%5c",
        "%00",
        "a%00b",
        "%e0%80",
        "%ed%a0%80",
        "%c0%af",
        "%",
        "%zz",
        "%ff%fe",
        "%F0%9F%98%80",
        "__proto__",
        "constructor",
        "toString",
        "a;b",
        "a%3Bb",
        "%20",
        "+",
        ".",
      ),
    },
    { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponentLoose(s)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...ids), fc.integer({ min: 65, max: 5_000 }))
        .map(([id, n]) => id.padEnd(n, "x")),
    },
    { weight: 1, arbitrary: fc.constantFrom(...ids).map((id) => [...id].map((c) => `%${hex(c)}`).join("")) },
  );

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(2, "0");

/** encodeURIComponent, except that a lone surrogate (which it refuses) is written as its raw UTF-8 bytes. */
function encodeURIComponentLoose(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...s]
      .map((c) => {
        const code = c.charCodeAt(0);
        if (c.length === 1 && code >= 0xd800 && code <= 0xdfff) {
          return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`;
        }
        return encodeURIComponent(c);
      })
      .join("");
  }
}

/** A query string: known and unknown parameters, repeated, malformed, with hostile values. */
export const queryString = (hashes: string[]): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        versionRef(hashes).map((v) => `version=${encodeURIComponentLoose(v)}`),
        fc.constantFrom("true", "false", "TRUE", "0", "", "yes").map((v) => `guard=${v}`),
        fc
          .oneof(fc.integer({ min: -5, max: 200 }).map(String), nastyString)
          .map((v) => `limit=${encodeURIComponentLoose(v)}`),
        nastyString.map((v) => `cursor=${encodeURIComponentLoose(v)}`),
        nastyString.map((v) => `status=${encodeURIComponentLoose(v)}`),
        fc.constantFrom(
          "%",
          "=",
          "&",
          "a=%zz",
          "version",
          "version[]=latest",
          "version[a]=1",
          "__proto__[x]=1",
          "constructor=1",
          "guard=true&guard=false",
          "version=latest&version=production",
          "limit=1&limit=2",
          "%ed%a0%80=1",
          "a=%00",
        ),
      ),
      { maxLength: 5 },
    )
    .map((parts) => (parts.length === 0 ? "" : `?${parts.join("&")}`));

// ---- headers ----

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  'application/json; charset="x"',
  "application/JSON",
  "application/json, text/plain",
  "application/jsonx",
  "application/problem+json",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/octet-stream",
  "",
  ";;;",
  "*/*",
];

/** Headers a client may get wrong: content type and charset, long and duplicated values, odd accepts. */
export const headerSet = (world: FuzzWorld): fc.Arbitrary<Record<string, string | string[]>> =>
  fc
    .record(
      {
        "content-type": fc.oneof(
          { weight: 8, arbitrary: fc.constant("application/json") },
          fc.constantFrom(...CONTENT_TYPES),
        ),
        "x-api-key": fc.oneof(
          { weight: 7, arbitrary: fc.constant(world.key) },
          { weight: 1, arbitrary: fc.constant(world.readKey) },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              "",
              "ps_",
              "ps_wrong",
              `${world.key}x`,
              world.key.slice(0, -1),
              " ",
              "x".repeat(4_000),
            ),
          },
          { weight: 1, arbitrary: fc.constant<string[]>([world.key, world.key]) },
        ),
        accept: fc.constantFrom("application/json, text/event-stream", "*/*", "text/html", "", "application/json"),
        "if-none-match": fc.oneof(
          fc.constant("*"),
          nastyString.map((s) => s.replace(/[^\x20-\x7e]/g, "")),
        ),
        "mcp-protocol-version": fc.constantFrom("2025-06-18", "2025-03-26", "2026-07-28", "1999-01-01", ""),
        origin: fc.constantFrom("https://evil.example", "null", "http://localhost", "http://[::1]", "%"),
        "x-long": fc.integer({ min: 1, max: 12_000 }).map((n) => "v".repeat(n)),
        "x-dup": fc.array(fc.constantFrom("a", "b", ""), { minLength: 2, maxLength: 6 }),
        "accept-charset": fc.constantFrom("utf-16", "latin1", "*"),
        "x-forwarded-for": fc.constantFrom("1.2.3.4", "::1", "not-an-ip", "1.1.1.1, 2.2.2.2"),
        cookie: fc.constantFrom(
          "ps_session=x",
          `ps_session=${world.session.cookie}`,
          `ps_session=${world.session.cookie}`,
          `ps_session=${world.session.cookie}`,
          `ps_session=${world.session.cookie}; ps_session=other`,
          "a".repeat(200),
        ),
        "x-csrf-token": fc.constantFrom(world.session.csrf, world.session.csrf, world.session.csrf, "", "wrong"),
      },
      { requiredKeys: ["x-api-key", "content-type", "accept"] },
    )
    .map((headers) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = value;
      if (out["content-type"] === "") delete out["content-type"];
      return out;
    });

// ---- requests ----

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/** Every route the service has, with its parameters filled from the world and the generators. */
export const fuzzRequest = (world: FuzzWorld): fc.Arbitrary<FuzzRequest> => {
  const prompt = pathId(world.promptIds);
  const webhook = pathId(world.webhookIds);
  const project = pathId([world.mainProjectId, world.otherProjectId, "p_missing"]);
  const org = pathId([world.orgId, world.otherOrgId, "o_missing"]);
  const keyId = pathId(world.keyIds);
  const userId = pathId(world.userIds);
  const query = queryString(world.hashes);
  /** Each path with the methods its route takes; another method now and then (405). */
  const route = (paths: fc.Arbitrary<string>, methods: string[]) =>
    fc.tuple(paths, fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...methods) }, fc.constantFrom(...METHODS)));
  const path = fc.oneof(
    route(
      prompt.map((id) => `/api/v1/prompts/${id}`),
      ["GET"],
    ),
    route(fc.constant("/api/v2/prompts"), ["GET", "POST"]),
    route(
      prompt.map((id) => `/api/v2/prompts/${id}`),
      ["GET", "PUT", "DELETE"],
    ),
    route(
      prompt.map((id) => `/api/v2/prompts/${id}/versions`),
      ["GET"],
    ),
    route(
      prompt.map((id) => `/api/v2/prompts/${id}/publish`),
      ["POST"],
    ),
    route(fc.constant("/api/v2/webhooks"), ["GET", "POST"]),
    route(fc.constant("/api/v2/import"), ["POST"]),
    route(fc.constant("/api/v2/audit"), ["GET"]),
    route(
      webhook.map((id) => `/api/v2/webhooks/${id}`),
      ["GET", "PATCH", "DELETE"],
    ),
    route(
      webhook.map((id) => `/api/v2/webhooks/${id}/rotate-secret`),
      ["POST"],
    ),
    route(
      webhook.map((id) => `/api/v2/webhooks/${id}/deliveries`),
      ["GET"],
    ),
    route(fc.constant("/api/dashboard/session"), ["GET", "POST", "DELETE"]),
    route(fc.constant("/api/dashboard/password"), ["POST"]),
    route(
      project.map((p) => `/api/dashboard/projects/${p}/prompts`),
      ["GET", "POST"],
    ),
    route(
      fc.tuple(project, prompt).map(([p, id]) => `/api/dashboard/projects/${p}/prompts/${id}`),
      ["GET", "PUT", "DELETE"],
    ),
    route(
      fc.tuple(project, prompt).map(([p, id]) => `/api/dashboard/projects/${p}/prompts/${id}/versions`),
      ["GET"],
    ),
    route(
      fc.tuple(project, prompt).map(([p, id]) => `/api/dashboard/projects/${p}/prompts/${id}/publish`),
      ["POST"],
    ),
    route(
      project.map((p) => `/api/dashboard/projects/${p}/webhooks`),
      ["GET", "POST"],
    ),
    route(
      fc.tuple(project, webhook).map(([p, id]) => `/api/dashboard/projects/${p}/webhooks/${id}`),
      ["PATCH", "DELETE"],
    ),
    route(
      fc.tuple(project, webhook).map(([p, id]) => `/api/dashboard/projects/${p}/webhooks/${id}/rotate-secret`),
      ["POST"],
    ),
    route(
      fc.tuple(project, webhook).map(([p, id]) => `/api/dashboard/projects/${p}/webhooks/${id}/deliveries`),
      ["GET"],
    ),
    route(
      project.map((p) => `/api/dashboard/projects/${p}/audit`),
      ["GET"],
    ),
    route(
      project.map((p) => `/api/dashboard/projects/${p}/keys`),
      ["GET", "POST"],
    ),
    route(
      fc.tuple(project, keyId).map(([p, id]) => `/api/dashboard/projects/${p}/keys/${id}`),
      ["DELETE"],
    ),
    route(
      org.map((o) => `/api/dashboard/orgs/${o}/projects`),
      ["POST"],
    ),
    route(
      org.map((o) => `/api/dashboard/orgs/${o}/members`),
      ["GET", "POST"],
    ),
    route(
      org.map((o) => `/api/dashboard/orgs/${o}/usage`),
      ["GET"],
    ),
    route(
      fc.tuple(org, userId).map(([o, u]) => `/api/dashboard/orgs/${o}/members/${u}`),
      ["PATCH", "DELETE"],
    ),
    route(
      fc.constantFrom(
        "/healthz",
        "/metrics",
        "/api/v2/openapi.json",
        "/api/v2/",
        "/api/v3/prompts",
        "/api//v2/prompts",
        "/api/v2/prompts/",
      ),
      ["GET"],
    ),
    // The dashboard's files: traversal out of its directory must find nothing.
    route(
      fc.constantFrom(
        "/assets/..%2f..%2fpackage.json",
        "/..%2f..%2f..%2fpackage.json",
        "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fserver%2fpackage.json",
        "/index.html%00.js",
        "/assets/",
        "/.env",
      ),
      ["GET", "HEAD"],
    ),
  );
  return fc
    .record({
      route: path,
      query,
      headers: headerSet(world),
      body: fc.option(bodyText(world.promptIds), { nil: undefined, freq: 5 }),
    })
    .map(({ route: [path, method], query, headers, body }) => ({
      method,
      url: path + query,
      headers,
      ...(body !== undefined && method !== "GET" && method !== "HEAD" ? { payload: body } : {}),
    }));
};

/** MCP JSON-RPC: every tool and prompt, with generated arguments; also malformed messages. */
export const mcpMessage = (world: FuzzWorld): fc.Arbitrary<string> => {
  const tools = [
    "list_prompts",
    "get_prompt",
    "create_prompt",
    "save_prompt_version",
    "publish_prompt",
    "list_versions",
    "delete_prompt",
    "toString",
    "__proto__",
    "constructor",
    "nope",
  ];
  const args = fc.record(
    {
      id: fc.oneof(fc.constantFrom(...world.promptIds), nastyString, jsonValue),
      version: fc.oneof(versionRef(world.hashes), jsonValue),
      guard: fc.oneof(fc.boolean(), jsonValue),
      name: fc.oneof(nastyString, jsonValue),
      description: nastyString,
      sections: fc.oneof(fc.array(section, { maxLength: 3 }), jsonValue),
      markdown: fc.oneof(fc.constant("# A\nx"), nastyString),
      tools: fc.oneof(fc.array(tool, { maxLength: 2 }), jsonValue),
      model: fc.oneof(modelSettings, jsonValue),
      publish: fc.oneof(fc.boolean(), jsonValue),
      message: nastyString,
      limit: fc.oneof(fc.integer({ min: -1, max: 1000 }), jsonValue),
      cursor: nastyString,
    },
    { requiredKeys: [] },
  );
  const id = fc.oneof(fc.integer({ min: 0, max: 1e6 }), fc.constant("x"), fc.constant(null), jsonValue);
  const call = fc.record({
    name: fc.constantFrom(...tools),
    arguments: fc.oneof({ weight: 5, arbitrary: args }, jsonValue),
  });
  const promptGet = fc.record({
    name: fc.oneof(fc.constantFrom(...world.promptIds), nastyString),
    arguments: fc.oneof(fc.dictionary(nastyString, fc.oneof(nastyString, jsonValue), { maxKeys: 3 }), jsonValue),
  });
  const message = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constant("tools/call"), params: call }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constant("prompts/get"), params: promptGet }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        jsonrpc: fc.constantFrom("2.0", "1.0"),
        id,
        method: fc.constantFrom("tools/list", "prompts/list", "initialize", "resources/list", "ping", "__proto__", ""),
        params: fc.option(jsonValue, { nil: undefined }),
      }),
    },
    { weight: 1, arbitrary: jsonValue },
  );
  return fc.oneof(
    { weight: 8, arbitrary: message.map(toJson) },
    { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map(toJson) },
    { weight: 1, arbitrary: bodyText(world.promptIds) },
  ) as fc.Arbitrary<string>;
};

// ---- checks ----

/** What must never be in an answer: a stack frame, a path of this machine, a module name, a file from outside the dashboard. */
export const INTERNALS =
  /"devDependencies"|root:x:0:0|\n\s+at |\bat [\w.<>]+ \(|node_modules|\/work\/|file:\/\/|\.ts:\d+|\.js:\d+|SqliteError|error: relation|ECONNREFUSED/;

/** Columns that change with no request asking (a dispatcher retrying, a key's last use). */
const MOVING: Record<string, string[]> = {
  api_keys: ["last_used_at"],
  webhook_deliveries: [
    "status",
    "attempts",
    "next_attempt_at",
    "locked_until",
    "lock_token",
    "first_attempt_at",
    "last_attempt_at",
    "last_response_code",
    "last_error",
    "delivered_at",
  ],
};

/** Every row of every table, rows sorted, as one string: equal dumps mean an unchanged store. */
export async function dumpStore(store: Store): Promise<string> {
  const parts: string[] = [];
  // The backup's list: every table there is, so a table a later migration adds is compared too.
  for (const table of await tablesOf(store.db)) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(store.db);
    const moving = MOVING[table] ?? [];
    const lines = rows.map((row) => {
      for (const column of moving) delete row[column];
      return JSON.stringify(row, (_k, v) =>
        typeof v === "bigint" ? String(v) : Buffer.isBuffer(v) ? v.toString("hex") : v,
      );
    });
    lines.sort();
    parts.push(`${table}\n${lines.join("\n")}`);
  }
  return parts.join("\n\n");
}
