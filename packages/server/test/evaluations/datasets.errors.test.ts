/**
 * docs/evaluations.md, "Datasets": bad input on every field is a 400 naming the field (or the line of a file),
 * conflicts are 409, and a refused request stores nothing (every dataset table and the audit trail equal).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { canonicalJson, dumpDatasets, jsonl, manyCases } from "./dataset-support.js";

describe.each(DATABASES)("dataset errors ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_DATASET_MAX_CASES: 12, PROMPTSTORE_DATASET_MAX_IMPORT_BYTES: 65_536 });
  let id = "";
  let version = "";
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "Base", cases: manyCases(3) } });
    id = created.body.data.id;
    version = created.body.data.version;
  });

  /** Sends, expects the status and message, and that nothing was stored. */
  async function refused(
    method: string,
    url: string,
    send: { body?: unknown; payload?: string; type?: string },
    status: number,
    error: string,
  ) {
    const before = await dumpDatasets(t.store);
    const res = await t.request(method, url, {
      ...(send.body === undefined ? {} : { body: send.body }),
      ...(send.payload === undefined ? {} : { payload: send.payload }),
      ...(send.type === undefined ? {} : { headers: { "content-type": send.type } }),
    });
    expect({ status: res.status, body: res.body }, `${method} ${url}`).toEqual({
      status,
      body: { success: false, error },
    });
    expect(await dumpDatasets(t.store)).toBe(before);
  }

  it("every field of a create, replace and append body, named", async () => {
    const big = "x".repeat(100 * 1024);
    const rows: [string, string, unknown, string][] = [
      ["POST", "/api/v2/datasets", { cases: [] }, "name: required"],
      ["POST", "/api/v2/datasets", { name: "  ", cases: [] }, "name: must not be empty"],
      ["POST", "/api/v2/datasets", { name: "n".repeat(201), cases: [] }, "name: must be at most 200 characters"],
      ["POST", "/api/v2/datasets", { name: 5, cases: [] }, "name: must be a string, not a number"],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", description: "d".repeat(2001), cases: [] },
        "description: must be at most 2000 characters",
      ],
      ["POST", "/api/v2/datasets", { name: "D" }, "cases: required (or from_examples)"],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [], from_examples: "bot" },
        "from_examples: give cases or from_examples, not both",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", from_examples: "Not A Slug" },
        "from_examples: must be 1-64 characters of a-z, 0-9, _ or -, starting with a letter or digit",
      ],
      ["POST", "/api/v2/datasets", { name: "D", cases: {} }, "cases: must be an array, not an object"],
      ["POST", "/api/v2/datasets", { name: "D", cases: [], extra: 1 }, "extra: is not a known field"],
      ["POST", "/api/v2/datasets", { name: "D", cases: ["x"] }, "cases[0]: must be an object, not a string"],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [...manyCases(12), { vars: { company: 7 } }] },
        "cases[12].vars.company: must be a string, not a number",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ vars: [] }] },
        "cases[0].vars: must be an object, not an array",
      ],
      ["POST", "/api/v2/datasets", { name: "D", cases: [{ input: "x" }] }, "cases[0].input: is not a known field"],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ messages: [{ role: "system", content: "x" }] }] },
        'cases[0].messages[0].role: must have role "user", "assistant" or "tool"',
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ expected: 3 }] },
        "cases[0].expected: must be a string, not a number",
      ],
      ["POST", "/api/v2/datasets", { name: "D", cases: [{ tags: [""] }] }, "cases[0].tags[0]: must not be empty"],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }] },
        "cases[0].tags: must hold at most 20 tags",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ vars: { a: big } }] },
        "cases[0].vars.a: must be at most 100000 characters",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ vars: { a: "a".repeat(60_000), b: "b".repeat(60_000) } }] },
        "cases[0]: is 120024 bytes as canonical JSON; a case holds at most 102400",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [{ vars: { a: "\u0000" } }] },
        "cases[0].vars.a: contains U+0000 (NUL), which cannot be stored",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: Array.from({ length: 1001 }, () => ({})) },
        "cases: must hold at most 1000 cases; send more with POST /api/v2/datasets/{id}/cases or an import",
      ],
      [
        "POST",
        "/api/v2/datasets",
        { name: "D", cases: [], message: "m".repeat(501) },
        "message: must be at most 500 characters",
      ],
      ["PUT", `/api/v2/datasets/${"ID"}`, {}, "cases: required"],
      [
        "PUT",
        `/api/v2/datasets/${"ID"}`,
        { cases: [], base: "abc" },
        "base: must be the full 64-character hash of a dataset version",
      ],
      ["POST", `/api/v2/datasets/${"ID"}/cases`, { cases: [] }, "cases: must hold at least 1 case"],
      [
        "POST",
        `/api/v2/datasets/${"ID"}/cases`,
        { cases: [{ vars: { x: null } }] },
        "cases[0].vars.x: must be a string, not null",
      ],
      ["PATCH", `/api/v2/datasets/${"ID"}`, {}, "body: must change name or description"],
      ["PATCH", `/api/v2/datasets/${"ID"}`, { name: "" }, "name: must not be empty"],
      ["PATCH", `/api/v2/datasets/${"ID"}`, { cases: [] }, "cases: is not a known field"],
    ];
    for (const [method, url, body, error] of rows) {
      await refused(method, url.replace("ID", id), { body }, 400, error);
    }
  });

  it("a case may be in a version once: repeats are refused naming both places", async () => {
    const [a, b, c] = manyCases(3, 10);
    await refused(
      "POST",
      "/api/v2/datasets",
      { body: { name: "D", cases: [a, b, a] } },
      400,
      "cases[2]: repeats cases[0]; a case is in a version once",
    );
    // The same case written two ways is one case.
    await refused(
      "PUT",
      `/api/v2/datasets/${id}`,
      { body: { cases: [{ tags: ["x", "y"] }, c, { vars: {}, tags: ["y", "x", "x"] }] } },
      400,
      "cases[2]: repeats cases[0]; a case is in a version once",
    );
    await refused(
      "POST",
      `/api/v2/datasets/${id}/cases`,
      { body: { cases: [c, manyCases(1, 1)[0]] } },
      400,
      `cases[1]: repeats case 1 of version ${version.slice(0, 12)}; a case is in a version once`,
    );
    await refused(
      "POST",
      `/api/v2/datasets/${id}/import`,
      { payload: jsonl([a, b, c, b]), type: "application/x-ndjson" },
      400,
      "line 4: repeats line 2; a case is in a version once",
    );
  });

  it("a version holds at most PROMPTSTORE_DATASET_MAX_CASES cases, however it is built", async () => {
    await refused(
      "POST",
      "/api/v2/datasets",
      { body: { name: "D", cases: manyCases(13) } },
      400,
      "cases[12]: a dataset version holds at most 12 cases",
    );
    await refused(
      "POST",
      `/api/v2/datasets/${id}/cases`,
      { body: { cases: manyCases(10, 3) } },
      400,
      "cases[9]: a dataset version holds at most 12 cases",
    );
    await refused(
      "POST",
      `/api/v2/datasets/${id}/import?mode=append`,
      { payload: `\n${jsonl(manyCases(10, 3))}`, type: "application/x-ndjson" },
      400,
      "line 11: a dataset version holds at most 12 cases",
    );
    // Exactly at the cap is fine.
    const full = await t.request("POST", `/api/v2/datasets/${id}/cases`, { body: { cases: manyCases(9, 3) } });
    expect(full.body.data.cases).toBe(12);
  });

  it("a file: its type, its size, and each line's problem, named by line; nothing stored", async () => {
    const url = `/api/v2/datasets/${id}/import`;
    const ok = canonicalJson(manyCases(1, 20)[0]);
    const rows: [string, string, string, number, string][] = [
      [url, "text/plain", "x", 415, "content-type: must be application/x-ndjson, application/jsonl, text/csv"],
      [url, "application/json", "[]", 415, "content-type: must be application/x-ndjson, application/jsonl, text/csv"],
      [`${url}?mode=both`, "application/x-ndjson", ok, 400, 'mode: must be "replace" or "append"'],
      [
        `${url}?base=${"0".repeat(63)}`,
        "application/x-ndjson",
        ok,
        400,
        "base: must be the full 64-character hash of a dataset version",
      ],
      [
        `${url}?base=${"0".repeat(64)}`,
        "application/x-ndjson",
        ok,
        409,
        `base: the dataset changed since this edit began; its head is now ${version}`,
      ],
      [url, "application/x-ndjson", `${ok}\n{"vars":`, 400, "line 2: is not valid JSON"],
      [
        url,
        "application/x-ndjson",
        `${ok}\n\n{"vars":{"company":1}}`,
        400,
        "line 3: vars.company: must be a string, not a number",
      ],
      [url, "application/x-ndjson", '"just a string"', 400, "line 1: case: must be an object, not a string"],
      [url, "application/x-ndjson", '{"expected":"x","extra":true}', 400, "line 1: extra: is not a known field"],
      [
        url,
        "application/x-ndjson",
        `{"vars":{"a":"${"a".repeat(70_000)}"}}`,
        413,
        "body: an import may hold at most 65536 bytes",
      ],
      [
        "/api/v2/datasets/import?name=Base",
        "application/x-ndjson",
        ok,
        409,
        'name: this project already has a dataset named "Base"',
      ],
      ["/api/v2/datasets/import", "application/x-ndjson", ok, 400, "name: required"],
      [url, "text/csv", "", 400, "line 1: a CSV import needs a header row naming its columns"],
      [url, "text/csv", "a,a\n1,2\n", 400, 'line 1: column "a" appears twice'],
      [url, "text/csv", "a,,b\n1,2,3\n", 400, "line 1: column 2 has no name"],
      [url, "text/csv", "a,b\n1,2\n3\n", 400, "line 3: does not have as many fields as the header"],
      [url, "text/csv", 'a,b\n1,"2\n', 400, "line 2: a quoted field is not closed"],
      [url, "text/csv", "a,messages\n1,[{\n", 400, "line 2: messages: is not valid JSON"],
      [
        url,
        "text/csv",
        'a,messages\n1,"[{""role"":""system"",""content"":""x""}]"\n',
        400,
        'line 2: messages[0].role: must have role "user", "assistant" or "tool"',
      ],
      [url, "text/csv", "a,tags\n1,x|y\n1,y | x\n", 400, "line 3: repeats line 2; a case is in a version once"],
    ];
    for (const [where, type, payload, status, error] of rows) {
      await refused("POST", where, { payload, type }, status, error);
    }
    // A line that is not UTF-8.
    const before = await dumpDatasets(t.store);
    const res = await t.app.server.inject({
      method: "POST",
      url,
      headers: { "x-api-key": t.key, "content-type": "application/x-ndjson" },
      payload: Buffer.concat([Buffer.from(`${ok}\n{"vars":{"a":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')]),
    });
    expect([res.statusCode, res.json().error]).toEqual([400, "line 2: is not valid UTF-8"]);
    expect(await dumpDatasets(t.store)).toBe(before);
  });

  it("conflicts: a taken name, a moved head, an ambiguous prefix; unknown versions are 404", async () => {
    await refused(
      "POST",
      "/api/v2/datasets",
      { body: { name: "Base", cases: [] } },
      409,
      'name: this project already has a dataset named "Base"',
    );
    const other = (await t.request("POST", "/api/v2/datasets", { body: { name: "Other", cases: [] } })).body.data.id;
    await refused(
      "PATCH",
      `/api/v2/datasets/${other}`,
      { body: { name: "Base" } },
      409,
      'name: this project already has a dataset named "Base"',
    );
    await refused(
      "POST",
      `/api/v2/datasets/${id}/cases`,
      { body: { cases: manyCases(1, 50), base: "f".repeat(64) } },
      409,
      `base: the dataset changed since this edit began; its head is now ${version}`,
    );
    // Two versions that share a 7-character prefix, written directly: finding such a pair by hashing would
    // take tens of thousands of versions.
    for (const hash of [`abcdef0${"1".repeat(57)}`, `abcdef0${"2".repeat(57)}`]) {
      await t.store.db
        .insertInto("dataset_versions")
        .values({
          dataset_id: id,
          hash,
          case_count: 0,
          parent: null,
          message: null,
          created_at: "2020-01-01T00:00:00.000Z",
          created_by: null,
        })
        .execute();
    }
    const ambiguous = await t.request("GET", `/api/v2/datasets/${id}?version=abcdef0`);
    expect([ambiguous.status, ambiguous.body.error]).toEqual([
      409,
      `version: abcdef0 matches more than one version of dataset ${id}; give more characters`,
    ]);
    expect((await t.request("GET", `/api/v2/datasets/${id}?version=abcdef01`)).body.data.version).toBe(
      `abcdef0${"1".repeat(57)}`,
    );
    const unknown = await t.request("GET", `/api/v2/datasets/${id}/cases?version=1234567`);
    expect([unknown.status, unknown.body.error]).toEqual([404, `version: no version of dataset ${id} matches 1234567`]);
    const exported = await t.request("GET", `/api/v2/datasets/${id}/export?version=1234567`);
    expect([exported.status, exported.body.error]).toEqual([
      404,
      `version: no version of dataset ${id} matches 1234567`,
    ]);

    const caller = {
      projectId: t.project.projectId,
      projectName: "",
      orgId: t.project.orgId,
      plan: "unlimited",
      actor: "test",
      access: "write" as const,
    };
    const resolveError = (ref: string) =>
      t.app.datasets.resolve(caller, ref).then(
        () => "resolved",
        (e: Error) => e.message,
      );
    expect(await resolveError(`${id}@abcdef0`)).toBe(
      `dataset: abcdef0 matches more than one version of dataset ${id}; give more characters`,
    );
    expect(await resolveError(`${id}@1234567`)).toBe(`dataset: no version of dataset ${id} matches 1234567`);
    expect(await resolveError("ds_000000000000000000000000")).toBe("dataset: ds_000000000000000000000000 not found");
    expect(await resolveError(`${id}@latest`)).toBe(
      'dataset: must be "<dataset id>" or "<dataset id>@<version hash or prefix of 7+ characters>"',
    );
    expect(await resolveError("Base")).toBe(
      'dataset: must be "<dataset id>" or "<dataset id>@<version hash or prefix of 7+ characters>"',
    );
  });

  it("queries: version, after, limit", async () => {
    const rows: [string, number, string][] = [
      [
        `/api/v2/datasets/${id}?version=abc`,
        400,
        "version: must be 7-64 lowercase hex characters of a dataset version hash",
      ],
      [`/api/v2/datasets/${id}/cases?after=-1`, 400, "after: must be a case's position (a whole number from 0)"],
      [`/api/v2/datasets/${id}/cases?after=x`, 400, "after: must be a case's position (a whole number from 0)"],
      [`/api/v2/datasets/${id}/cases?limit=0`, 400, "limit: must be a whole number from 1 to 1000"],
      [`/api/v2/datasets/${id}/cases?limit=1001`, 400, "limit: must be a whole number from 1 to 1000"],
      [
        `/api/v2/datasets/${id}/export?version=XYZXYZXYZ`,
        400,
        "version: must be 7-64 lowercase hex characters of a dataset version hash",
      ],
      ["/api/v2/datasets/ds_nope", 404, "dataset ds_nope not found"],
      ["/api/v2/datasets/ds_000000000000000000000000/versions", 404, "dataset ds_000000000000000000000000 not found"],
    ];
    for (const [url, status, error] of rows) {
      const res = await t.request("GET", url);
      expect([res.status, res.body.error], url).toEqual([status, error]);
    }
  });

  it("from_examples: an unknown prompt, or one without examples", async () => {
    await refused(
      "POST",
      "/api/v2/datasets",
      { body: { name: "D", from_examples: "nowhere" } },
      404,
      "from_examples: prompt nowhere not found",
    );
    await t.request("POST", "/api/v2/prompts", { body: { id: "bare", name: "Bare", markdown: "# A\nx" } });
    await refused(
      "POST",
      "/api/v2/datasets",
      { body: { name: "D", from_examples: "bare" } },
      400,
      "from_examples: prompt bare has no saved examples",
    );
  });
});

describe.each(DATABASES)("dataset imports of big lines ($name)", (database) => {
  const t = useTestApp(database);

  it("a case over 100 KiB and a line over 1 MiB, named by line; nothing stored", async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "Base", cases: manyCases(1) } });
    const url = `/api/v2/datasets/${created.body.data.id}/import`;
    const rows: [string, string][] = [
      [
        `${canonicalJson(manyCases(1, 5)[0])}\n{"vars":{"a":"${"é".repeat(52_000)}"}}`,
        "line 2: case: is 104017 bytes as canonical JSON; a case holds at most 102400",
      ],
      // Escapes make a line longer than its case: the line's own bound is 1 MiB.
      [`{"vars":{"a":"${"\\u0041".repeat(180_000)}"}}`, "line 1: is longer than 1048576 bytes"],
    ];
    for (const [payload, error] of rows) {
      const before = await dumpDatasets(t.store);
      const res = await t.request("POST", url, { payload, headers: { "content-type": "application/x-ndjson" } });
      expect([res.status, res.body.error]).toEqual([400, error]);
      expect(await dumpDatasets(t.store)).toBe(before);
    }
  });
});

describe.each(DATABASES)("hostile input to the dataset routes ($name)", (database) => {
  const t = useTestApp(database);

  it("odd ids, queries, content types and values are 4xx in the envelope, never 5xx, and store nothing", async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "Base", cases: manyCases(2) } });
    const id = created.body.data.id as string;
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const requests: { method: string; url: string; payload?: string; type?: string }[] = [
      { method: "GET", url: "/api/v2/datasets/ds_%00" },
      { method: "GET", url: "/api/v2/datasets/%2e%2e%2fprompts" },
      { method: "GET", url: `/api/v2/datasets/${"ds_".padEnd(5000, "a")}` },
      { method: "GET", url: `/api/v2/datasets/${id}?version=a&version=b` },
      { method: "GET", url: `/api/v2/datasets/${id}/cases?after=1&after=2` },
      { method: "GET", url: `/api/v2/datasets/${id}/cases?limit=1.5` },
      { method: "GET", url: `/api/v2/datasets/${id}/export?version=%ed%a0%80` },
      { method: "POST", url: "/api/v2/datasets/import?name=%00", payload: "", type: "application/x-ndjson" },
      { method: "POST", url: "/api/v2/datasets/import?name=a&name=b", payload: "", type: "application/x-ndjson" },
      {
        method: "POST",
        url: `/api/v2/datasets/${id}/import`,
        payload: `{"vars":${deep}}`,
        type: "application/x-ndjson",
      },
      { method: "POST", url: `/api/v2/datasets/${id}/import`, payload: deep, type: "application/x-ndjson" },
      { method: "POST", url: `/api/v2/datasets/${id}/import`, payload: "__proto__,a\n1,2\n", type: "text/csv" },
      { method: "POST", url: `/api/v2/datasets/${id}/import`, payload: "a\n\u0000\n", type: "text/csv" },
      { method: "POST", url: `/api/v2/datasets/${id}/import`, payload: "x", type: "multipart/form-data; boundary=x" },
      { method: "POST", url: `/api/v2/datasets/${id}/import`, payload: "x" },
      { method: "PUT", url: `/api/v2/datasets/${id}`, payload: `{"cases":${deep}}`, type: "application/json" },
      { method: "PATCH", url: `/api/v2/datasets/${id}`, payload: '{"name":"\\ud800"}', type: "application/json" },
    ];
    const before = await dumpDatasets(t.store);
    for (const r of requests) {
      const res = await t.app.server.inject({
        method: r.method as "GET",
        url: r.url,
        headers: { "x-api-key": t.key, ...(r.type === undefined ? {} : { "content-type": r.type }) },
        ...(r.payload === undefined ? {} : { payload: r.payload }),
      });
      expect(res.statusCode, `${r.method} ${r.url} ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, `${r.method} ${r.url} ${res.body}`).toBeLessThan(500);
      expect(Object.keys(res.json())).toEqual(["success", "error"]);
    }
    expect(await dumpDatasets(t.store)).toBe(before);
  });
});
