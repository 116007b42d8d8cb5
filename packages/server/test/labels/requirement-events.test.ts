/**
 * docs/evaluations.md, "Required evaluations", and docs/events.md: a change of a label's requirement (set,
 * replaced, removed, or its rollback rule) is an audit row and one `label.requirement_changed` event, the
 * project's and no prompt's: on every event stream of the project and to the webhooks subscribed to it.
 * Saving the same settings again changes nothing and records nothing.
 */
import { PROMPT_EVENT_TYPES } from "@promptstore/core/events";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { createDataset } from "../support/evaluations.js";
import { type EventStreamReader, openEventStream } from "../support/sse.js";
import { eventually, type Receiver, startReceiver, verify } from "../webhooks/receiver.js";

const TYPE = "label.requirement_changed";

describe.each(DATABASES)("label.requirement_changed ($name)", (database) => {
  const t = useTestApp(database, {
    PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
    PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
    PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 1000,
  });
  let owner: Browser;
  let url = "";
  let labels = "";
  let requirement: Record<string, unknown>;
  const readers: EventStreamReader[] = [];
  const receivers: Receiver[] = [];

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    owner = await member(t, "owner");
    labels = `/api/dashboard/projects/${t.project.projectId}/labels`;
    const connection = await t.app.connections.create(
      { projectId: t.project.projectId, operator: true },
      { name: "Model", base_url: "https://models.example.com/v1", api_key: "sk-test", models: ["m1"] },
    );
    const dataset = await createDataset(t, "cases", [{ vars: { n: "1" } }]);
    requirement = {
      dataset: dataset.id,
      checks: [{ type: "contains", value: "ok" }],
      connection: connection.id,
      min_pass_rate: 1,
    };
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    for (const receiver of receivers.splice(0)) await receiver.close();
  });

  const stream = async (key = t.key, headers: Record<string, string> = {}, query = "") => {
    const reader = await openEventStream(url, key, headers, query);
    readers.push(reader);
    await reader.next((e) => e.event === "ready");
    return reader;
  };
  const hook = async (events: readonly string[]) => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const res = await t.request("POST", "/api/v2/webhooks", { body: { url: receiver.url, events } });
    expect(res.status).toBe(201);
    return { receiver, id: res.body.data.id as string, secret: res.body.data.secret as string };
  };
  /** Changes production's settings as an owner does in the dashboard; the answer's `updated_at`. */
  const configure = async (body: Record<string, unknown>): Promise<string> => {
    const res = await owner.call("PUT", `${labels}/production`, { body });
    expect([res.status, res.body.error]).toEqual([200, undefined]);
    return res.body.data.updated_at;
  };
  const hashOf = (body: Record<string, unknown>) => sha256Hex(canonical(body));
  const data = (reader: EventStreamReader) =>
    reader.received.filter((e) => e.event === TYPE || e.event?.startsWith("prompt.")).map((e) => e.data as string);

  it("each change is one event with exact data, on the stream and to a subscribed webhook; the same settings again, none", async () => {
    const subscribed = await hook([TYPE]);
    const promptsOnly = await hook(PROMPT_EVENT_TYPES);
    const reader = await stream();
    const withReads = await stream(t.key, {}, "?include=read");

    const tighter = { ...requirement, min_pass_rate: 0.5, no_regression: true };
    const h1 = hashOf(requirement);
    const h2 = hashOf(tighter);
    const set = await configure({ required_evaluation: requirement });
    await configure({ required_evaluation: requirement }); // the same: nothing changes
    await configure({ description: "what users get" }); // not the requirement: no event
    const changed = await configure({ required_evaluation: tighter });
    const noRollback = await configure({ rollback_allowed: false });
    await configure({ rollback_allowed: false, required_evaluation: tighter }); // the same again
    const cleared = await configure({ required_evaluation: null });
    // A prompt's event after them: once it arrives, everything before it has.
    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "after" }) });
    expect(created.status).toBe(201);
    await reader.next((e) => e.event === "prompt.created");
    await withReads.next((e) => e.event === "prompt.created");

    const received = reader.received.filter((e) => e.event === TYPE);
    const ids = received.map((e) => Number(e.id));
    expect(ids).toEqual([ids[0], ids[0]! + 1, ids[0]! + 2, ids[0]! + 3]);
    const event = (i: number, at: string, requirement: unknown, previous: unknown) =>
      `{"id":${ids[i]},"type":"${TYPE}","at":"${at}","label":"production","requirement":${JSON.stringify(requirement)},"previous":${JSON.stringify(previous)}}`;
    const expected = [
      event(0, set, { hash: h1, rollback_allowed: true }, { hash: null, rollback_allowed: true }),
      event(1, changed, { hash: h2, rollback_allowed: true }, { hash: h1, rollback_allowed: true }),
      event(2, noRollback, { hash: h2, rollback_allowed: false }, { hash: h2, rollback_allowed: true }),
      event(3, cleared, { hash: null, rollback_allowed: false }, { hash: h2, rollback_allowed: false }),
    ];
    // Exactly these, then the prompt's event, on both streams: the one with reads gets no read for them.
    expect(data(reader)).toEqual([...expected, expect.stringContaining('"type":"prompt.created"')]);
    expect(data(withReads).slice(0, 4)).toEqual(expected);
    expect(received.map((e) => e.event)).toEqual([TYPE, TYPE, TYPE, TYPE]);

    // A stream resumed from before them is replayed the same bytes.
    const replayed = await stream(t.key, { "last-event-id": String(ids[0]! - 1) });
    expect(data(replayed)).toEqual(data(reader));

    // The webhook subscribed to the type gets each, signed, the stream's event with the project first.
    await subscribed.receiver.waitFor((requests) => requests.length === 4);
    const bodies = subscribed.receiver.requests.map((r) => r.body);
    expect(bodies).toEqual(
      expected.map(
        (e, i) =>
          `{"type":"${TYPE}","timestamp":"${[set, changed, noRollback, cleared][i]}","data":{"project_id":"${t.project.projectId}",${e.slice(1)}}`,
      ),
    );
    expect(subscribed.receiver.requests.map((r) => r.headers["webhook-id"])).toEqual(ids.map((id) => `msg_${id}`));
    expect(verify(subscribed.secret, subscribed.receiver.requests[0]!)).toEqual({
      type: TYPE,
      timestamp: set,
      data: {
        project_id: t.project.projectId,
        id: ids[0],
        type: TYPE,
        at: set,
        label: "production",
        requirement: { hash: h1, rollback_allowed: true },
        previous: { hash: null, rollback_allowed: true },
      },
    });
    const deliveries = await eventually(
      async () =>
        (await t.request("GET", `/api/v2/webhooks/${subscribed.id}/deliveries`)).body.data.deliveries as any[],
      (list) => list.every((d) => d.status === "delivered"),
    );
    expect(deliveries.map((d) => [d.event_id, d.event_type, d.prompt_id, d.status])).toEqual(
      [...ids].reverse().map((id) => [id, TYPE, "", "delivered"]),
    );
    // An endpoint of the prompt types alone gets none of them: only the prompt's event.
    await promptsOnly.receiver.waitFor((requests) => requests.length === 1);
    expect(JSON.parse(promptsOnly.receiver.requests[0]!.body).type).toBe("prompt.created");

    // The audit rows are as they were: one per change, before and after.
    const audit = (await t.request("GET", "/api/v2/audit?limit=100")).body.data.entries as any[];
    expect(
      audit
        .filter((e) => e.action === TYPE)
        .reverse()
        .map((e) => [e.target, e.before, e.after]),
    ).toEqual([
      ["label:production", "none", h1],
      ["label:production", h1, h2],
      ["label:production", h2, `${h2} no-rollback`],
      ["label:production", `${h2} no-rollback`, "none"],
    ]);
  });

  it("a read key's stream gets it too (it names no one), and a first requirement on a label never configured starts from none", async () => {
    const read = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const reader = await stream(read);
    const at = await owner
      .call("PUT", `${labels}/staging`, { body: { required_evaluation: requirement, rollback_allowed: false } })
      .then((res) => res.body.data.updated_at as string);
    const event = await reader.next((e) => e.event === TYPE);
    expect(JSON.parse(event.data as string)).toEqual({
      id: Number(event.id),
      type: TYPE,
      at,
      label: "staging",
      requirement: { hash: hashOf(requirement), rollback_allowed: false },
      previous: { hash: null, rollback_allowed: true },
    });
  });
});
