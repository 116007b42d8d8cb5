/**
 * Datasets and who may touch them: a read key reads and writes nothing; a viewer in the dashboard likewise;
 * another project's dataset answers exactly as an id that exists nowhere, on every route.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { type TestProject, useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { dumpDatasets, jsonl, manyCases } from "./dataset-support.js";

const NOWHERE = "ds_000000000000000000000000";

describe.each(DATABASES)("dataset access ($name)", (database) => {
  const t = useTestApp(database);
  let id = "";
  let version = "";
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "Mine", cases: manyCases(3) } });
    id = created.body.data.id;
    version = created.body.data.version;
  });

  /** Every write route, with a body that would succeed. */
  const writes = (target: string) =>
    [
      ["POST", "/api/v2/datasets", { body: { name: "New", cases: [] } }, "creating datasets"],
      ["PUT", `/api/v2/datasets/${target}`, { body: { cases: manyCases(1) } }, "saving dataset versions"],
      ["POST", `/api/v2/datasets/${target}/cases`, { body: { cases: manyCases(1, 9) } }, "saving dataset versions"],
      ["PATCH", `/api/v2/datasets/${target}`, { body: { name: "Renamed" } }, "changing datasets"],
      ["DELETE", `/api/v2/datasets/${target}`, {}, "deleting datasets"],
      [
        "POST",
        `/api/v2/datasets/${target}/import`,
        { payload: jsonl(manyCases(1, 7)), headers: { "content-type": "application/x-ndjson" } },
        "importing datasets",
      ],
      [
        "POST",
        "/api/v2/datasets/import?name=Imported",
        { payload: jsonl(manyCases(1, 7)), headers: { "content-type": "application/x-ndjson" } },
        "importing datasets",
      ],
    ] as const;

  const reads = (target: string) => [
    "/api/v2/datasets",
    `/api/v2/datasets/${target}`,
    `/api/v2/datasets/${target}?version=${version.slice(0, 7)}`,
    `/api/v2/datasets/${target}/versions`,
    `/api/v2/datasets/${target}/cases?limit=2`,
    `/api/v2/datasets/${target}/export`,
  ];

  it("a read key reads everything and writes nothing (403 naming the scope); its reads name no person", async () => {
    const readKey = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    for (const url of reads(id)) {
      expect((await t.request("GET", url, { key: readKey })).status, url).toBe(200);
    }
    const editor = await member(t, "editor");
    await editor.call("PUT", `/api/dashboard/projects/${t.project.projectId}/datasets/${id}`, {
      body: { cases: manyCases(2) },
    });
    const versions = await t.request("GET", `/api/v2/datasets/${id}/versions`, { key: readKey });
    expect(versions.body.data.versions.map((v: { saved_by: string }) => v.saved_by)).toEqual([
      "user",
      `key:${t.key.slice(0, 12)}`,
    ]);

    const before = await dumpDatasets(t.store);
    for (const [method, url, options, action] of writes(id)) {
      const res = await t.request(method, url, { key: readKey, ...options });
      expect([res.status, res.body.error], `${method} ${url}`).toEqual([
        403,
        `scope: ${action} needs a key with scope write or higher; this key has scope read`,
      ]);
    }
    expect(await dumpDatasets(t.store)).toBe(before);
  });

  it("a viewer reads in the dashboard and changes nothing", async () => {
    const viewer = await member(t, "viewer");
    const base = `/api/dashboard/projects/${t.project.projectId}/datasets`;
    expect((await viewer.call("GET", `${base}/${id}/cases`)).status).toBe(200);
    const before = await dumpDatasets(t.store);
    for (const [method, url, body] of [
      ["POST", base, { name: "X", cases: [] }],
      ["PUT", `${base}/${id}`, { cases: [] }],
      ["DELETE", `${base}/${id}`, undefined],
    ] as const) {
      const res = await viewer.call(method, url, body === undefined ? {} : { body });
      expect([res.status, res.body.error]).toEqual([403, "role: viewer may not do this; it needs editor or owner"]);
    }
    expect(await dumpDatasets(t.store)).toBe(before);
  });

  it("another project's dataset answers byte for byte like one that exists nowhere, on every route", async () => {
    const theirs: TestProject = await t.newProject({ plan: "unlimited" });
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    const other = await t.request("POST", "/api/v2/datasets", {
      key: theirs.key,
      body: { name: "Theirs", cases: manyCases(3) },
    });
    const their = other.body.data.id as string;
    // The same cases, so the same version hash, in both projects.
    expect(other.body.data.version).toBe(version);

    const normalized = (res: { status: number; headers: Record<string, unknown>; body: unknown }, target: string) => {
      const { "x-request-id": _, date: __, connection: ___, ...headers } = res.headers;
      const body = (typeof res.body === "string" ? res.body : JSON.stringify(res.body)).split(target).join("<ID>");
      return { status: res.status, headers, body };
    };
    const before = await dumpDatasets(t.store);
    const routes: [string, (x: string) => string, Record<string, unknown>][] = [
      ...reads("X")
        .slice(1)
        .map((url): [string, (x: string) => string, Record<string, unknown>] => [
          "GET",
          (x) => url.replace("X", x),
          {},
        ]),
      ...writes("X")
        .filter(([, url]) => url.includes("X"))
        .map(([method, url, options]): [string, (x: string) => string, Record<string, unknown>] => [
          method,
          (x) => url.replace("X", x),
          options,
        ]),
    ];
    expect(routes).toHaveLength(10);
    for (const [method, url, options] of routes) {
      const a = normalized(await t.request(method, url(their), options), their);
      const b = normalized(await t.request(method, url(NOWHERE), options), NOWHERE);
      expect(a, `${method} ${url("X")}`).toEqual(b);
      expect(a.status, `${method} ${url("X")}`).toBe(404);
    }
    expect(await t.app.datasets.resolve({ ...caller(t.project), access: "read" }, their).catch((e) => e.message)).toBe(
      `dataset: ${their} not found`,
    );
    expect(await dumpDatasets(t.store)).toBe(before);
    // Their dataset is whole.
    const read = await t.request("GET", `/api/v2/datasets/${their}/cases`, { key: theirs.key });
    expect(read.body.data.cases).toHaveLength(3);
  });
});

function caller(project: TestProject) {
  return {
    projectId: project.projectId,
    projectName: "",
    orgId: project.orgId,
    plan: "unlimited",
    actor: "test",
    access: "write" as const,
  };
}
