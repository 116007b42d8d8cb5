/**
 * docs/evaluations.md, "Datasets": content-addressed versions of ordered cases, built whole, appended to, read
 * at any version (hash or prefix), paged, renamed, deleted; a prompt's saved examples as a dataset.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { caseHash, manyCases, versionHash } from "./dataset-support.js";

describe.each(DATABASES)("datasets ($name)", (database) => {
  const t = useTestApp(database);
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
  });

  const create = async (body: Record<string, unknown>) => {
    const res = await t.request("POST", "/api/v2/datasets", { body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; name: string; version: string; cases: number };
  };
  const casesOf = async (id: string, query = "") => {
    const res = await t.request("GET", `/api/v2/datasets/${id}/cases${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as {
      id: string;
      version: string;
      cases: { position: number; id: string; case: unknown }[];
      next_after: number | null;
    };
  };

  it("a version is the SHA-256 of the canonical array of its cases; cases keep their order and are named by content", async () => {
    const written = [
      { vars: { company: "Acme", question: "Refund?" }, expected: "Yes, within 30 days", tags: ["refunds", "billing"] },
      { messages: [{ role: "user", content: "Hello" }] },
      { vars: { company: "Beta" }, tags: ["billing", "billing"], messages: [] },
    ];
    // The normal form: vars always, tags a sorted set, no empty messages.
    const normal = [
      { vars: { company: "Acme", question: "Refund?" }, expected: "Yes, within 30 days", tags: ["billing", "refunds"] },
      { vars: {}, messages: [{ role: "user", content: "Hello" }] },
      { vars: { company: "Beta" }, tags: ["billing"] },
    ];
    const created = await create({ name: "Support questions", description: "Tier 1", cases: written });
    expect(created).toEqual({
      id: created.id,
      name: "Support questions",
      version: versionHash(normal),
      cases: 3,
    });
    expect(created.id).toMatch(/^ds_[0-9a-f]{24}$/);

    const read = await t.request("GET", `/api/v2/datasets/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({
      id: created.id,
      name: "Support questions",
      description: "Tier 1",
      head: created.version,
      version: created.version,
      cases: 3,
      parent: null,
      message: null,
      saved_at: read.body.data.saved_at,
      saved_by: `key:${t.key.slice(0, 12)}`,
      created_at: read.body.data.created_at,
      updated_at: read.body.data.updated_at,
    });

    const page = await casesOf(created.id);
    expect(page).toEqual({
      id: created.id,
      version: created.version,
      cases: normal.map((c, position) => ({ position, id: caseHash(c), case: c })),
      next_after: null,
    });

    const list = await t.request("GET", "/api/v2/datasets");
    expect(list.body.data).toEqual({
      datasets: [
        {
          id: created.id,
          name: "Support questions",
          description: "Tier 1",
          version: created.version,
          cases: 3,
          created_at: read.body.data.created_at,
          updated_at: read.body.data.updated_at,
        },
      ],
    });
  });

  it("identical cases make no new version (created: false); one changed case changes only that case's id", async () => {
    const cases = manyCases(5);
    const created = await create({ name: "Math", cases });
    const same = await t.request("PUT", `/api/v2/datasets/${created.id}`, { body: { cases, message: "again" } });
    expect(same.status).toBe(200);
    expect(same.body.data).toEqual({ id: created.id, version: created.version, created: false, cases: 5 });
    expect((await t.request("GET", `/api/v2/datasets/${created.id}/versions`)).body.data.versions).toHaveLength(1);

    const changed = cases.map((c, i) => (i === 2 ? { ...c, expected: "changed" } : c));
    const saved = await t.request("PUT", `/api/v2/datasets/${created.id}`, {
      body: { cases: changed, message: "fix case 2" },
    });
    expect(saved.body.data).toEqual({ id: created.id, version: versionHash(changed), created: true, cases: 5 });
    const before = (await casesOf(created.id, `?version=${created.version}`)).cases.map((c) => c.id);
    const after = (await casesOf(created.id)).cases.map((c) => c.id);
    expect(after.filter((id, i) => id !== before[i])).toEqual([caseHash(changed[2])]);
    expect(after.map((id, i) => id === before[i])).toEqual([true, true, false, true, true]);

    const versions = await t.request("GET", `/api/v2/datasets/${created.id}/versions`);
    expect(versions.body.data).toEqual({
      id: created.id,
      head: saved.body.data.version,
      versions: [
        {
          version: saved.body.data.version,
          cases: 5,
          parent: created.version,
          message: "fix case 2",
          saved_at: versions.body.data.versions[0].saved_at,
          saved_by: `key:${t.key.slice(0, 12)}`,
        },
        {
          version: created.version,
          cases: 5,
          parent: null,
          message: null,
          saved_at: versions.body.data.versions[1].saved_at,
          saved_by: `key:${t.key.slice(0, 12)}`,
        },
      ],
    });

    // Back to the first cases: no new version, the head returns to it.
    const back = await t.request("PUT", `/api/v2/datasets/${created.id}`, { body: { cases } });
    expect(back.body.data).toEqual({ id: created.id, version: created.version, created: false, cases: 5 });
    expect((await t.request("GET", `/api/v2/datasets/${created.id}`)).body.data.head).toBe(created.version);
  });

  it("an append is the head's cases and then the new ones: the same version a PUT of the concatenation makes", async () => {
    const first = manyCases(3);
    const more = manyCases(2, 3);
    const created = await create({ name: "Grows", cases: first });
    const appended = await t.request("POST", `/api/v2/datasets/${created.id}/cases`, {
      body: { cases: more, base: created.version, message: "two more" },
    });
    expect(appended.status).toBe(200);
    const all = [...first, ...more];
    expect(appended.body.data).toEqual({ id: created.id, version: versionHash(all), created: true, cases: 5 });
    const put = await t.request("PUT", `/api/v2/datasets/${created.id}`, { body: { cases: all } });
    expect(put.body.data).toEqual({ id: created.id, version: versionHash(all), created: false, cases: 5 });
    // Another dataset given the concatenation at once has the same version.
    expect((await create({ name: "At once", cases: all })).version).toBe(versionHash(all));
    expect((await casesOf(created.id)).cases.map((c) => c.case)).toEqual(all);
  });

  it("reads any version by full hash or unique prefix of 7+; old versions stay readable; cases page by position", async () => {
    const created = await create({ name: "Paged", cases: manyCases(7) });
    const v2 = (await t.request("PUT", `/api/v2/datasets/${created.id}`, { body: { cases: manyCases(2, 100) } })).body
      .data.version;
    const old = await t.request("GET", `/api/v2/datasets/${created.id}?version=${created.version.slice(0, 7)}`);
    expect(old.body.data).toMatchObject({ head: v2, version: created.version, cases: 7 });
    expect((await t.request("GET", `/api/v2/datasets/${created.id}?version=${v2}`)).body.data.version).toBe(v2);

    const first = await casesOf(created.id, `?version=${created.version.slice(0, 10)}&limit=3`);
    expect(first.cases.map((c) => c.position)).toEqual([0, 1, 2]);
    expect(first.next_after).toBe(2);
    const second = await casesOf(created.id, `?version=${created.version}&limit=3&after=2`);
    expect(second.cases.map((c) => c.position)).toEqual([3, 4, 5]);
    const last = await casesOf(created.id, `?version=${created.version}&limit=3&after=5`);
    expect(last.cases.map((c) => c.case)).toEqual(manyCases(1, 6));
    expect(last.next_after).toBeNull();
    expect((await casesOf(created.id, `?version=${created.version}&after=6`)).cases).toEqual([]);
  });

  it("resolves `<id>` and `<id>@<version or prefix>` for an evaluation", async () => {
    const created = await create({ name: "For runs", cases: manyCases(4) });
    const v2 = (await t.request("PUT", `/api/v2/datasets/${created.id}`, { body: { cases: manyCases(6) } })).body.data
      .version;
    const caller = {
      projectId: t.project.projectId,
      projectName: "",
      orgId: t.project.orgId,
      plan: "unlimited",
      actor: "test",
      access: "write" as const,
    };
    expect(await t.app.datasets.resolve(caller, created.id)).toEqual({ id: created.id, version: v2, case_count: 6 });
    expect(await t.app.datasets.resolve(caller, `${created.id}@${created.version.slice(0, 8)}`)).toEqual({
      id: created.id,
      version: created.version,
      case_count: 4,
    });
  });

  it("renames and describes without a version; deletes with every version; each change is an audit row", async () => {
    const created = await create({ name: "Old name", cases: manyCases(2) });
    const renamed = await t.request("PATCH", `/api/v2/datasets/${created.id}`, {
      body: { name: "New name", description: "now described" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      id: created.id,
      name: "New name",
      description: "now described",
      version: created.version,
      cases: 2,
    });
    const cleared = await t.request("PATCH", `/api/v2/datasets/${created.id}`, { body: { description: null } });
    expect(cleared.body.data.description).toBeNull();
    const v2 = (await t.request("POST", `/api/v2/datasets/${created.id}/cases`, { body: { cases: manyCases(1, 50) } }))
      .body.data.version;
    await t.request("PUT", `/api/v2/datasets/${created.id}`, { body: { cases: manyCases(2) } });
    const deleted = await t.request("DELETE", `/api/v2/datasets/${created.id}`);
    expect(deleted.body.data).toEqual({ id: created.id, deleted: true });
    expect((await t.request("GET", `/api/v2/datasets/${created.id}`)).status).toBe(404);
    expect((await t.request("GET", "/api/v2/datasets")).body.data.datasets).toEqual([]);
    for (const table of ["dataset_versions", "dataset_cases", "dataset_version_cases"] as const) {
      expect(await t.store.db.selectFrom(table).selectAll().execute()).toEqual([]);
    }

    const audit = await t.request("GET", "/api/v2/audit");
    const rows = audit.body.data.entries
      .filter((e: { action: string }) => e.action.startsWith("dataset."))
      .map((e: Record<string, unknown>) => [e.action, e.target, e.before, e.after]);
    expect(rows).toEqual([
      ["dataset.deleted", created.id, created.version, null],
      ["dataset.head_moved", created.id, v2, created.version],
      ["dataset.version_created", created.id, created.version, v2],
      ["dataset.updated", created.id, "New name", "New name"],
      ["dataset.updated", created.id, "Old name", "New name"],
      ["dataset.created", created.id, null, created.version],
    ]);
  });

  it("from_examples: a prompt's saved examples as they are (variables, messages, good answer as expected), in order", async () => {
    await t.request("POST", "/api/v2/prompts", {
      body: { id: "support", name: "Support", markdown: "# Role\nHelp {{ customer }}." },
    });
    const examples = [
      { name: "Refund", variables: { customer: "Ada" }, good_answer: "Apologises" },
      {
        name: "Chat",
        variables: { customer: "Bob" },
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: "Hello Bob" },
          { role: "user", content: "Where is my order?" },
        ],
      },
      // The same inputs and answer as the first: one case.
      { name: "Refund again", variables: { customer: "Ada" }, good_answer: "Apologises" },
    ];
    for (const body of examples) {
      expect((await t.request("POST", "/api/v2/prompts/support/examples", { body })).status).toBe(201);
    }
    const created = await t.request("POST", "/api/v2/datasets", {
      body: { name: "From examples", from_examples: "support" },
    });
    expect(created.status).toBe(201);
    const normal = [
      { vars: { customer: "Ada" }, expected: "Apologises" },
      { vars: { customer: "Bob" }, messages: examples[1]?.messages },
    ];
    expect(created.body.data).toEqual({
      id: created.body.data.id,
      name: "From examples",
      version: versionHash(normal),
      cases: 2,
      examples: 3,
    });
    expect((await casesOf(created.body.data.id)).cases.map((c) => c.case)).toEqual(normal);
  });

  it("the dashboard has the same routes under the project, through a session", async () => {
    const editor = await member(t, "editor");
    const base = `/api/dashboard/projects/${t.project.projectId}/datasets`;
    const created = await editor.call("POST", base, { body: { name: "In the dashboard", cases: manyCases(2) } });
    expect(created.status).toBe(201);
    expect(created.body.data.version).toBe(versionHash(manyCases(2)));
    const listed = await editor.call("GET", base);
    expect(listed.body.data.datasets.map((d: { id: string }) => d.id)).toEqual([created.body.data.id]);
    // The same dataset through a key.
    expect((await t.request("GET", `/api/v2/datasets/${created.body.data.id}`)).body.data.saved_by).toBe(
      `user:${editor.email}`,
    );
    const imported = await t.request("POST", `${base}/${created.body.data.id}/import?mode=append`, {
      key: null,
      headers: {
        cookie: `ps_session=${editor.cookie}`,
        "x-csrf-token": editor.csrf,
        "content-type": "application/x-ndjson",
      },
      payload: '{"vars":{"x":"1"}}\n',
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.data.cases).toBe(3);
  });
});
