/**
 * docs/evaluations.md, "How a version is built": what a build that died leaves (a stage, bodies only it
 * listed, a dataset whose first import never finished) is swept after an hour, before a build of the same
 * dataset and at start-up; a fresh stage (a build in progress) is left alone. A head that moved while an
 * append was built refuses the commit.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { DatasetStore } from "../../src/store/evaluations/datasets.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { manyCases } from "./dataset-support.js";

describe.each(DATABASES)("dataset stages that died ($name)", (database) => {
  const t = useTestApp(database);
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
  });

  const stageRows = async (datasetId: string) =>
    (
      await t.store.db
        .selectFrom("dataset_version_cases")
        .select("version")
        .where("dataset_id", "=", datasetId)
        .where("version", "like", "stage:%")
        .execute()
    ).map((r) => r.version);
  const bodies = async (datasetId: string) =>
    (await t.store.db.selectFrom("dataset_cases").select("case_id").where("dataset_id", "=", datasetId).execute())
      .map((r) => r.case_id)
      .sort();

  /** A stage begun `ageMs` ago holding one case of its own, as a build that died leaves it. */
  async function deadStage(datasetId: string, ageMs: number, caseId: string) {
    const stage = DatasetStore.newStage(Date.now() - ageMs);
    await t.app.datasets.store.stageCases(datasetId, stage, 0, [{ case_id: caseId, body: '{"vars":{"dead":"1"}}' }]);
    return stage;
  }

  it("a stage over an hour old goes, with the bodies only it listed, before the next build; a fresh one stays", async () => {
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "D", cases: manyCases(2) } });
    const id = created.body.data.id;
    const kept = await bodies(id);
    const old = await deadStage(id, 2 * 3_600_000, "a".repeat(64));
    const fresh = await deadStage(id, 60_000, "b".repeat(64));
    expect((await stageRows(id)).sort()).toEqual([old, fresh].sort());

    await t.request("PUT", `/api/v2/datasets/${id}`, { body: { cases: manyCases(2) } });
    expect(await stageRows(id)).toEqual([fresh]);
    expect(await bodies(id)).toEqual([...kept, "b".repeat(64)].sort());
  });

  it("at start-up: stale stages of every dataset, and datasets whose first import never finished", async () => {
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "D", cases: manyCases(1) } });
    const id = created.body.data.id;
    await deadStage(id, 2 * 3_600_000, "c".repeat(64));
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const ghost = {
      id: "ds_0123456789abcdef01234567",
      project_id: t.project.projectId,
      name: "Ghost",
      description: null,
      head: null,
      created_at: twoHoursAgo,
      updated_at: twoHoursAgo,
    };
    await t.store.db.insertInto("datasets").values(ghost).execute();
    await t.store.db
      .insertInto("datasets")
      .values({ ...ghost, id: "ds_fedcba9876543210fedcba98", name: "Young", created_at: new Date().toISOString() })
      .execute();
    // Not listed, not found, while its import runs.
    expect(
      (await t.request("GET", "/api/v2/datasets")).body.data.datasets.map((d: { name: string }) => d.name),
    ).toEqual(["D"]);
    expect((await t.request("GET", "/api/v2/datasets/ds_fedcba9876543210fedcba98")).status).toBe(404);

    await t.app.datasets.sweepAll();
    expect(await stageRows(id)).toEqual([]);
    expect(await bodies(id)).toHaveLength(1);
    const left = await t.store.db.selectFrom("datasets").select("name").orderBy("name").execute();
    expect(left.map((r) => r.name)).toEqual(["D", "Young"]);
  });

  it("a name held by a first import that died over an hour ago is taken over; a young one is not", async () => {
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const row = { project_id: t.project.projectId, description: null, head: null, updated_at: twoHoursAgo };
    await t.store.db
      .insertInto("datasets")
      .values({ ...row, id: "ds_0123456789abcdef01234567", name: "Old", created_at: twoHoursAgo })
      .execute();
    await t.store.db
      .insertInto("datasets")
      .values({ ...row, id: "ds_fedcba9876543210fedcba98", name: "Busy", created_at: new Date().toISOString() })
      .execute();
    expect((await t.request("POST", "/api/v2/datasets", { body: { name: "Old", cases: [] } })).status).toBe(201);
    const busy = await t.request("POST", "/api/v2/datasets", { body: { name: "Busy", cases: [] } });
    expect([busy.status, busy.body.error]).toEqual([409, 'name: this project already has a dataset named "Busy"']);
  });

  it("a commit expecting a head that moved does nothing and says where the head is", async () => {
    const created = await t.request("POST", "/api/v2/datasets", { body: { name: "D", cases: manyCases(1) } });
    const { id, version } = created.body.data;
    const store = t.app.datasets.store;
    const stage = DatasetStore.newStage();
    await store.stageCases(id, stage, 0, [{ case_id: "d".repeat(64), body: '{"vars":{"x":"1"}}' }]);
    const done = await store.commitStage(
      id,
      stage,
      {
        hash: "e".repeat(64),
        case_count: 1,
        parent: null,
        message: null,
        created_at: new Date().toISOString(),
        created_by: null,
      },
      { expectHead: "f".repeat(64) },
    );
    expect(done).toEqual({ headMoved: version });
    expect((await t.request("GET", `/api/v2/datasets/${id}`)).body.data.head).toBe(version);
    expect((await t.request("GET", `/api/v2/datasets/${id}/versions`)).body.data.versions).toHaveLength(1);
  });
});
