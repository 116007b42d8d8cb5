import type { Check } from "@promptstore/core/evaluations/checks";
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OpenConnection } from "../../src/service/playground/connection-service.js";
import { unlimitedCaller, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { type Receiver, startReceiver } from "../webhooks/receiver.js";
import { cell, checkRunner, refusal, says, VERSION } from "./checks-support.js";

const NO_CONNECTION: OpenConnection = { id: "con_000000000000000000000000", baseUrl: "", apiKey: null, models: [] };
const HINT = "set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Answers 200 with this JSON (or text) body. */
const answers = (body: unknown, status = 200) =>
  ((_request, _index, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
    return undefined;
  }) satisfies Receiver["respond"];

describe.each(DATABASES)("webhook checks ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true });
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  /** A check-only endpoint (no event types), made through REST: its id and its signing secret. */
  const endpoint = async (url = receiver.url, key?: string) => {
    const res = await t.request("POST", "/api/v2/webhooks", {
      body: { url, events: [], description: "evaluation checks" },
      ...(key !== undefined ? { key } : {}),
    });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, secret: res.body.data.secret as string };
  };

  it("POSTs the case and the answer, signed with the endpoint's secret, and takes the receiver's verdict", async () => {
    const hook = await endpoint();
    receiver.respond = answers({ pass: true, score: 0.8, reason: "polite", extra: "ignored" });
    const runner = checkRunner(t);
    const checks: Check[] = [{ type: "webhook", name: "tone", endpoint: hook.id }];
    const prepared = await runner.prepare(await unlimitedCaller(t), checks, NO_CONNECTION);
    const pinned = [{ type: "webhook", name: "tone", endpoint: hook.id, url: receiver.url }];
    expect(prepared.checks).toEqual(pinned);
    expect(prepared.hash).toBe(sha256Hex(canonical(pinned)));

    const call = { id: "call_1", type: "function" as const, function: { name: "greet", arguments: "{}" } };
    const input = cell(
      says("Hello Ada", [call]),
      { vars: { name: "Ada" }, messages: [{ role: "user", content: "Hi" }], expected: "Hello", tags: ["greeting"] },
      { promptId: "support", evaluationId: "eva_1" },
    );
    expect(await runner.run(prepared, input)).toEqual([{ pass: true, score: 0.8, reason: "polite" }]);

    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0] as (typeof receiver.requests)[0];
    // Standard Webhooks: the signature verifies with the endpoint's secret (and the timestamp is now).
    const verified = new Webhook(hook.secret).verify(request.body, request.headers as Record<string, string>);
    expect(verified).toEqual(JSON.parse(request.body));
    expect(request.headers["webhook-id"]).toMatch(/^msg_check_[0-9a-f]{24}$/);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.body)).toEqual({
      type: "evaluation.check",
      timestamp: expect.stringMatching(ISO),
      data: {
        project_id: t.project.projectId,
        check: "tone",
        prompt_id: "support",
        version: VERSION,
        evaluation_id: "eva_1",
        case: {
          id: input.caseId,
          vars: { name: "Ada" },
          messages: [{ role: "user", content: "Hi" }],
          expected: "Hello",
          tags: ["greeting"],
        },
        answer: { content: "Hello Ada", tool_calls: [call] },
      },
    });
    // Another secret does not verify it.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(
        request.body,
        request.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it("a fail, and the score and reason a receiver leaves out", async () => {
    const hook = await endpoint();
    const runner = checkRunner(t);
    const prepared = await runner.prepare(
      await unlimitedCaller(t),
      [{ type: "webhook", endpoint: hook.id }],
      NO_CONNECTION,
    );
    receiver.respond = answers({ pass: false, score: 0.2, reason: "  rude  " });
    expect(await runner.run(prepared, cell(says("Go away")))).toEqual([{ pass: false, score: 0.2, reason: "rude" }]);
    receiver.respond = answers({ pass: false });
    expect(await runner.run(prepared, cell(says("Go away")))).toEqual([
      { pass: false, score: 0, reason: "the endpoint says fail" },
    ]);
    receiver.respond = answers({ pass: true });
    expect(await runner.run(prepared, cell(says(null)))).toEqual([
      { pass: true, score: 1, reason: "the endpoint says pass" },
    ]);
    // An answer without text or tool calls is sent as it is: content null, no tool_calls.
    expect(JSON.parse(receiver.requests[2]?.body ?? "").data.answer).toEqual({ content: null });
    expect(JSON.parse(receiver.requests[2]?.body ?? "").data.case).toEqual({
      id: cell(says(null)).caseId,
      vars: {},
    });
  });

  it("anything but a verdict in a 2xx answer, in time, is an error of the check", async () => {
    const hook = await endpoint();
    const runner = checkRunner(t, { webhookTimeoutMs: 300 });
    const prepared = await runner.prepare(
      await unlimitedCaller(t),
      [{ type: "webhook", endpoint: hook.id }],
      NO_CONNECTION,
    );
    const outcome = async () => (await runner.run(prepared, cell(says("x"))))[0];

    receiver.respond = answers("internal trouble", 500);
    expect(await outcome()).toEqual({ error: "webhook: HTTP 500: internal trouble" });
    receiver.respond = (_r, _i, res) => {
      res.writeHead(302, { location: "https://elsewhere.example.com/" }).end();
      return undefined;
    };
    expect(await outcome()).toEqual({ error: "webhook: HTTP 302 (redirects are not followed)" });
    // Larger than 64 KiB: cut, and an error, however the receiver goes on.
    receiver.respond = answers(JSON.stringify({ pass: true, reason: "x".repeat(70_000) }));
    expect(await outcome()).toEqual({ error: "webhook: the answer is larger than 65536 bytes" });
    // An answer that never comes.
    receiver.respond = () => undefined;
    expect(await outcome()).toEqual({ error: "webhook: timed out after 300 ms" });
    receiver.respond = answers("yes");
    expect(await outcome()).toEqual({ error: 'webhook: the answer is not JSON: "yes"' });
    receiver.respond = answers([true]);
    expect(await outcome()).toEqual({
      error: 'webhook: answer: must be a JSON object: { "pass": true|false, "score"?: 0 to 1, "reason"?: "…" }',
    });
    receiver.respond = answers({ passed: true });
    expect(await outcome()).toEqual({ error: "webhook: answer.pass: must be true or false" });
    receiver.respond = answers({ pass: true, score: 2 });
    expect(await outcome()).toEqual({ error: "webhook: answer.score: must be a number from 0 to 1" });
    receiver.respond = answers({ pass: true, reason: 7 });
    expect(await outcome()).toEqual({ error: "webhook: answer.reason: must be a string" });
  });

  it("follows the webhook address policy", async () => {
    const hook = await endpoint();
    const runner = checkRunner(t, { webhookAllowPrivate: false });
    const prepared = await runner.prepare(
      await unlimitedCaller(t),
      [{ type: "webhook", endpoint: hook.id }],
      NO_CONNECTION,
    );
    expect(await runner.run(prepared, cell(says("x")))).toEqual([
      { error: `webhook: refused: 127.0.0.1, a loopback address; ${HINT}` },
    ]);
    expect(receiver.requests).toHaveLength(0);
  });

  it("refuses at prepare an endpoint that is not the project's, or is disabled; pins the URL", async () => {
    const hook = await endpoint();
    const runner = checkRunner(t);
    const caller = await unlimitedCaller(t);
    const prepare = (id: string) =>
      refusal(runner.prepare(caller, [{ type: "json" }, { type: "webhook", endpoint: id }], NO_CONNECTION));
    const unknown = `whk_${"0".repeat(24)}`;
    expect(await prepare(unknown)).toEqual({
      status: 400,
      message: `checks[1].endpoint: no webhook endpoint ${unknown} in this project`,
    });
    const other = await t.newProject();
    const theirs = await endpoint(receiver.url, other.key);
    expect(await prepare(theirs.id)).toEqual({
      status: 400,
      message: `checks[1].endpoint: no webhook endpoint ${theirs.id} in this project`,
    });

    const before = await runner.prepare(caller, [{ type: "webhook", endpoint: hook.id }], NO_CONNECTION);
    // A moved endpoint is another check set; a set prepared before it moved does not follow it.
    const moved = `${receiver.url}/v2`;
    expect((await t.request("PATCH", `/api/v2/webhooks/${hook.id}`, { body: { url: moved } })).status).toBe(200);
    const after = await runner.prepare(caller, [{ type: "webhook", endpoint: hook.id }], NO_CONNECTION);
    expect(after.checks).toEqual([{ type: "webhook", endpoint: hook.id, url: moved }]);
    expect(after.hash).not.toBe(before.hash);
    expect(await runner.run(before, cell(says("x")))).toEqual([
      { error: `webhook: endpoint ${hook.id}'s URL changed after the evaluation started` },
    ]);

    expect((await t.request("PATCH", `/api/v2/webhooks/${hook.id}`, { body: { enabled: false } })).status).toBe(200);
    expect(await prepare(hook.id)).toEqual({
      status: 400,
      message: `checks[1].endpoint: webhook endpoint ${hook.id} is disabled; enable it first`,
    });
    expect(await runner.run(after, cell(says("x")))).toEqual([{ error: `webhook: endpoint ${hook.id} is disabled` }]);
    expect((await t.request("DELETE", `/api/v2/webhooks/${hook.id}`)).status).toBe(200);
    expect(await runner.run(after, cell(says("x")))).toEqual([{ error: `webhook: endpoint ${hook.id} was removed` }]);
    expect(receiver.requests).toHaveLength(0);
  });

  it("signs with the secret as it is now: a rotated secret signs the next request", async () => {
    const hook = await endpoint();
    receiver.respond = answers({ pass: true });
    const runner = checkRunner(t);
    const prepared = await runner.prepare(
      await unlimitedCaller(t),
      [{ type: "webhook", endpoint: hook.id }],
      NO_CONNECTION,
    );
    const rotated = await t.request("POST", `/api/v2/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    await runner.run(prepared, cell(says("x")));
    const request = receiver.requests[0] as (typeof receiver.requests)[0];
    const headers = request.headers as Record<string, string>;
    expect(() => new Webhook(rotated.body.data.secret).verify(request.body, headers)).not.toThrow();
    expect(() => new Webhook(hook.secret).verify(request.body, headers)).toThrow();
  });

  it("an endpoint with no event types receives no event deliveries", async () => {
    const hook = await endpoint();
    const created = await t.request("POST", "/api/v2/prompts", {
      body: { id: "p", name: "p", sections: [{ title: "R", content: "x" }], publish: true },
    });
    expect(created.status).toBe(201);
    const deliveries = await t.request("GET", `/api/v2/webhooks/${hook.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.deliveries).toEqual([]);
    const read = await t.request("GET", `/api/v2/webhooks/${hook.id}`);
    expect(read.body.data.events).toEqual([]);
  });
});
