import { describe, expect, it } from "vitest";
import { promptBody } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { changes, openEventStream } from "../support/sse.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");

/** Two instances of the app on one PostgreSQL database, each with its own pool and LISTEN connection. */
describe.runIf(postgres)("events across two instances ('postgres')", () => {
  const two = useTwoInstances(postgres!);
  const { apps, stores, urls, readers } = two;
  const call = (instance: number, method: string, path: string, body?: unknown) =>
    two.call(instance, method, path, body ?? {});

  it("a stream on one instance sees a publish made on the other", async () => {
    const reader = await openEventStream(urls[1] as string, two.key);
    readers.push(reader);
    await reader.next((e) => e.event === "ready");
    const created = await call(0, "POST", "/api/v2/prompts", promptBody(1, { id: "p" }));
    expect(created.status).toBe(201);
    await call(0, "POST", "/api/v2/prompts/p/publish");
    const published = await reader.next((e) => e.event === "prompt.published");
    expect(JSON.parse(published.data as string)).toMatchObject({
      prompt_id: "p",
      version: created.body.data.version,
      production_version: created.body.data.version,
    });
  });

  it("a label's requirement changed on one instance reaches a stream on the other, with no prompt event after it", async () => {
    const reader = await openEventStream(urls[1] as string, two.key);
    readers.push(reader);
    await reader.next((e) => e.event === "ready");
    const grant = (await apps[0]!.tenants.findGrant(two.key))!;
    const projectId = grant.projectId;
    const connection = await apps[0]!.connections.create(
      { projectId, operator: true },
      { name: "Model", base_url: "https://models.example.com/v1", api_key: "sk-test", models: ["m1"] },
    );
    const dataset = await call(0, "POST", "/api/v2/datasets", { name: "cases", cases: [{ vars: { n: "1" } }] });
    const owner = {
      projectId,
      projectName: "p",
      orgId: grant.orgId,
      plan: "unlimited",
      actor: "user:owner@example.com",
      access: "publish" as const,
      role: "owner" as const,
    };
    const settings = await apps[0]!.prompts.configureLabel(owner, "production", {
      required_evaluation: {
        dataset: dataset.body.data.id,
        checks: [{ type: "contains", value: "ok" }],
        connection: connection.id,
        min_pass_rate: 1,
      },
    });
    const event = await reader.next((e) => e.event === "label.requirement_changed");
    expect(JSON.parse(event.data as string)).toMatchObject({
      label: "production",
      at: settings.updated_at,
      previous: { hash: null, rollback_allowed: true },
    });
  });

  it("concurrent writes on both instances reach both streams complete, in id order, once each", async () => {
    const onA = await openEventStream(urls[0] as string, two.key);
    const onB = await openEventStream(urls[1] as string, two.key);
    readers.push(onA, onB);
    await onA.next((e) => e.event === "ready");
    await onB.next((e) => e.event === "ready");

    const ids = Array.from({ length: 8 }, (_, i) => `p${i}`);
    await Promise.all(ids.map((id, i) => call(i % 2, "POST", "/api/v2/prompts", promptBody(i, { id }))));
    // Each prompt gets three more saves and a publish, interleaved across instances and prompts.
    await Promise.all(
      ids.flatMap((id, i) => [
        ...[1, 2, 3].map((n) => call((i + n) % 2, "PUT", `/api/v2/prompts/${id}`, promptBody(100 * (i + 1) + n))),
        call((i + 1) % 2, "POST", `/api/v2/prompts/${id}/publish`),
      ]),
    );
    const recorded = await stores[0]!.events.since((await apps[0]!.tenants.findGrant(two.key))!.projectId, 0, 1000);
    const expected = recorded.map((e) => e.id);
    expect(expected.length).toBeGreaterThanOrEqual(8 + 8 * 3);
    const last = expected[expected.length - 1] as number;
    for (const reader of [onA, onB]) {
      await reader.next((e) => Number(e.id) === last && e.event !== "ready");
      expect(changes(reader).map((e) => e.id)).toEqual(expected);
    }
  });
});
