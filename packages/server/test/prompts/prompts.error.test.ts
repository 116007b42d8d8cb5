import { describe, expect, it } from "vitest";
import { failureEnvelope } from "../../src/http/openapi/response-schemas.js";
import { promptBody, type Response, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const expectFailure = (res: Response, status: number, message: RegExp) => {
  expect(res.status).toBe(status);
  expect(failureEnvelope.parse(res.body).error).toMatch(message);
};

describe.each(DATABASES)("v2 prompts, errors ($name)", (database) => {
  const t = useTestApp(database);

  /** A snapshot of everything the project has stored, to prove a rejected request changed nothing. */
  const snapshot = async () => {
    const list = (await t.request("GET", "/api/v2/prompts")).body.data.prompts;
    const versions = await Promise.all(
      list.map(async (p: { id: string }) => (await t.request("GET", `/api/v2/prompts/${p.id}/versions`)).body.data),
    );
    return { list, versions };
  };

  describe("400: the message names the field", () => {
    const long = (n: number) => "x".repeat(n);
    const cases: [string, unknown, RegExp][] = [
      ["non-object JSON (array)", [1, 2], /^body: /],
      ["non-object JSON (string)", "text", /^body: /],
      ["non-object JSON (null)", null, /^body: /],
      ["missing name", { sections: [{ title: "A", content: "x" }] }, /^name: required$/],
      ["blank name", { name: "   ", sections: [{ title: "A", content: "x" }] }, /^name: must not be empty/],
      ["name too long", { name: long(201), sections: [{ title: "A", content: "x" }] }, /^name: must be at most 200/],
      ["description too long", { ...promptBody(), description: long(2001) }, /^description: must be at most 2000/],
      ["neither sections nor markdown", { name: "A" }, /^sections: required/],
      ["both sections and markdown", { ...promptBody(), markdown: "# A\nx" }, /^markdown: send either/],
      ["empty sections", { name: "A", sections: [] }, /^sections: must contain at least one/],
      [
        "101 sections",
        { name: "A", sections: Array.from({ length: 101 }, () => ({ title: "T", content: "c" })) },
        /^sections: must contain at most 100/,
      ],
      ["section without title", { name: "A", sections: [{ content: "x" }] }, /^sections\[0\]\.title: required$/],
      [
        "blank title",
        { name: "A", sections: [{ title: " ", content: "x" }] },
        /^sections\[0\]\.title: must not be blank/,
      ],
      [
        "title too long",
        { name: "A", sections: [{ title: long(1001), content: "x" }] },
        /^sections\[0\]\.title: must be at most 1000 characters$/,
      ],
      [
        "content too long",
        { name: "A", sections: [{ title: "T", content: long(1_000_001) }] },
        /^sections\[0\]\.content: must be at most 1000000 characters$/,
      ],
      ["content not a string", { name: "A", sections: [{ title: "T", content: 5 }] }, /^sections\[0\]\.content: /],
      [
        "enabled not a boolean",
        { name: "A", sections: [{ title: "T", content: "x", enabled: "yes" }] },
        /^sections\[0\]\.enabled: /,
      ],
      [
        "unknown section field",
        { name: "A", sections: [{ title: "T", content: "x", colour: 1 }] },
        /^sections\[0\]\.colour: is not a known field/,
      ],
      ["unknown body field", { ...promptBody(), publsh: true }, /^publsh: is not a known field/],
      ["publish not a boolean", { ...promptBody(), publish: "true" }, /^publish: /],
      ["bad explicit id", { ...promptBody(), id: "Has Spaces" }, /^id: /],
      ["markdown preamble", { name: "A", markdown: "intro\n# A\nx" }, /^markdown: text before/],
      ["markdown without heading", { name: "A", markdown: "## sub\nx" }, /^markdown: must contain/],
      [
        "markdown title too long",
        { name: "A", markdown: `# ${long(1001)}\nx` },
        /^markdown: sections\[0\]\.title: must be at most 1000 characters$/,
      ],
      ["tool with a bad type", { ...promptBody(), tools: [{ type: "retrieval" }] }, /^tools\[0\]\.type: /],
      [
        "tool with a bad name",
        {
          ...promptBody(),
          tools: [{ type: "function", function: { name: "has space", parameters: { type: "object" } } }],
        },
        /^tools\[0\]\.function\.name: /,
      ],
      [
        "tool parameters not an object schema",
        { ...promptBody(), tools: [{ type: "function", function: { name: "f", parameters: { type: "string" } } }] },
        /^tools\[0\]\.function\.parameters\.type: /,
      ],
      [
        "duplicate tool names",
        {
          ...promptBody(),
          tools: [1, 2].map(() => ({ type: "function", function: { name: "f", parameters: { type: "object" } } })),
        },
        /^tools\[1\]\.function\.name: duplicates/,
      ],
      ["message too long", { ...promptBody(), message: long(1001) }, /^message: must be at most 1000/],
    ];

    it.each(cases)("create: %s", async (_label, body, message) => {
      const before = await snapshot();
      expectFailure(await t.request("POST", "/api/v2/prompts", { body }), 400, message);
      expect(await snapshot()).toEqual(before);
    });

    it("save: the same validation, and nothing is stored", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const before = await snapshot();
      const put = (body: unknown) => t.request("PUT", "/api/v2/prompts/prompt-1", { body });
      expectFailure(await put({}), 400, /^sections: required/);
      expectFailure(await put({ sections: [{ title: "", content: "x" }] }), 400, /^sections\[0\]\.title: /);
      expectFailure(await put({ sections: promptBody().sections, name: "" }), 400, /^name: /);
      expectFailure(await put({ sections: promptBody().sections, id: "x" }), 400, /^id: is not a known field/);
      expectFailure(await put({ markdown: "no heading" }), 400, /^markdown: /);
      expect(await snapshot()).toEqual(before);
    });

    it("publish: a malformed version", async () => {
      const created = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1) })).body.data;
      const publish = (body: unknown) => t.request("POST", "/api/v2/prompts/prompt-1/publish", { body });
      // A prefix names a version from 7 characters on: 6 of a real hash is refused, and production stays unset.
      expectFailure(
        await publish({ version: created.version.slice(0, 6) }),
        400,
        /^version: must be latest, or 7-64 lowercase hex characters of a version hash$/,
      );
      expect((await t.request("GET", "/api/v2/prompts/prompt-1/versions")).body.data.production_version).toBeNull();
      expectFailure(await publish({ version: "abc" }), 400, /^version: /);
      expectFailure(await publish({ version: "ABCDEF1234" }), 400, /^version: /);
      expectFailure(await publish({ version: 7 }), 400, /^version: /);
      expectFailure(await publish({ version: "production" }), 400, /^version: /);
    });

    it("read: invalid version and guard query parameters", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      expectFailure(await t.request("GET", "/api/v2/prompts/prompt-1?version=abc"), 400, /^version: /);
      expectFailure(await t.request("GET", "/api/v2/prompts/prompt-1?version=staging"), 400, /^version: /);
      expectFailure(await t.request("GET", `/api/v2/prompts/prompt-1?version=${"a".repeat(65)}`), 400, /^version: /);
      expectFailure(await t.request("GET", "/api/v2/prompts/prompt-1?guard=yes"), 400, /^guard: must be true or false/);
      expectFailure(await t.request("GET", "/api/v2/prompts/prompt-1?guard=true&guard=false"), 400, /^guard: /);
    });

    it("list: invalid limit and cursor", async () => {
      for (const limit of ["0", "101", "abc", "1.5"]) {
        expectFailure(await t.request("GET", `/api/v2/prompts?limit=${limit}`), 400, /^limit: /);
      }
      expectFailure(await t.request("GET", "/api/v2/prompts?cursor=garbage"), 400, /^cursor: /);
    });

    it("malformed JSON", async () => {
      const res = await t.request("POST", "/api/v2/prompts", {
        payload: '{"name": "x",',
        headers: { "content-type": "application/json" },
      });
      expectFailure(res, 400, /^body: is not valid JSON/);
    });

    it("an empty JSON body on create", async () => {
      const res = await t.request("POST", "/api/v2/prompts", {
        payload: "",
        headers: { "content-type": "application/json" },
      });
      expectFailure(res, 400, /^body: /);
    });

    it("a prototype-pollution key is not a field and pollutes nothing", async () => {
      const res = await t.request("POST", "/api/v2/prompts", {
        payload: '{"name":"A","sections":[{"title":"T","content":"x"}],"__proto__":{"polluted":true}}',
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(201);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe("404", () => {
    it("unknown prompt on read, save, publish and versions", async () => {
      expectFailure(await t.request("GET", "/api/v2/prompts/nope"), 404, /prompt nope not found/);
      expectFailure(
        await t.request("PUT", "/api/v2/prompts/nope", { body: { sections: promptBody().sections } }),
        404,
        /not found/,
      );
      expectFailure(await t.request("POST", "/api/v2/prompts/nope/publish"), 404, /not found/);
      expectFailure(await t.request("GET", "/api/v2/prompts/nope/versions"), 404, /not found/);
    });

    it("an id that cannot exist (too long, bad characters) is not found, not a crash", async () => {
      expectFailure(await t.request("GET", `/api/v2/prompts/${"a".repeat(300)}`), 404, /not found/);
      expectFailure(await t.request("GET", "/api/v2/prompts/%E2%9C%93"), 404, /not found/);
    });

    it("unknown version on read and publish leaves production unchanged", async () => {
      const v1 = (await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { publish: true }) })).body.data
        .version;
      const unknown = v1.startsWith("0") ? "1".repeat(64) : "0".repeat(64);
      expectFailure(await t.request("GET", `/api/v2/prompts/prompt-1?version=${unknown}`), 404, /^version: /);
      expectFailure(
        await t.request("POST", "/api/v2/prompts/prompt-1/publish", { body: { version: unknown.slice(0, 10) } }),
        404,
        /^version: /,
      );
      expect((await t.request("GET", "/api/v2/prompts/prompt-1")).body.data.production_version).toBe(v1);
    });

    it("unknown routes", async () => {
      expectFailure(await t.request("GET", "/api/v2/nothing"), 404, /route not found/);
      // A program asking for an unknown page gets the envelope; browsers get the dashboard (dashboard tests).
      expectFailure(await t.request("GET", "/nowhere", { key: null }), 404, /route not found/);
    });
  });

  describe("405, 409, 413, 415, 403", () => {
    it("405 for a wrong method on a known path, with Allow", async () => {
      const res = await t.request("PATCH", "/api/v2/prompts/prompt-1");
      expectFailure(res, 405, /method not allowed/);
      expect(res.headers.allow).toBe("GET, HEAD, PUT, DELETE");
      expectFailure(await t.request("PATCH", "/api/v2/prompts"), 405, /method not allowed/);
      expectFailure(await t.request("GET", "/api/v2/prompts/x/publish"), 405, /method not allowed/);
    });

    it("409 when an explicit id is taken", async () => {
      await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "taken" } });
      const before = await snapshot();
      expectFailure(
        await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(2), id: "taken" } }),
        409,
        /^id: /,
      );
      expect(await snapshot()).toEqual(before);
    });

    it("413 for a body over 4 MiB", async () => {
      const body = { name: "A", sections: [{ title: "T", content: "x".repeat(4_200_000) }] };
      expectFailure(await t.request("POST", "/api/v2/prompts", { body }), 413, /^body: must be at most 4194304 bytes$/);
    });

    it("415 for a body that is not JSON", async () => {
      const headers = { "content-type": "text/plain" };
      expectFailure(await t.request("POST", "/api/v2/prompts", { payload: "hello", headers }), 415, /^content-type: /);
      const form = { "content-type": "application/x-www-form-urlencoded" };
      expectFailure(
        await t.request("PUT", "/api/v2/prompts/x", { payload: "a=b", headers: form }),
        415,
        /^content-type: /,
      );
    });

    it("403 at the Free plan's 6th prompt, and nothing is stored", async () => {
      for (let n = 0; n < 5; n++)
        expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(n) })).status).toBe(201);
      const before = await snapshot();
      expectFailure(await t.request("POST", "/api/v2/prompts", { body: promptBody(5) }), 403, /plan limit/);
      expect(await snapshot()).toEqual(before);
      expect(before.list).toHaveLength(5);
    });

    it("a rejected create does not use up a plan slot", async () => {
      await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(0), id: "dup" } });
      for (let n = 0; n < 3; n++) await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "dup" } });
      for (let n = 1; n < 5; n++)
        expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(n) })).status).toBe(201);
    });

    it("the pro plan allows more than 5 prompts", async () => {
      const pro = await t.newProject({ plan: "pro" });
      for (let n = 0; n < 6; n++) {
        expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(n), key: pro.key })).status).toBe(201);
      }
    });
  });
});
