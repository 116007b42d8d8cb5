/**
 * README (webhooks): an attempt is bounded by PROMPTSTORE_WEBHOOK_TIMEOUT_MS from connecting to the end of
 * the answer. A receiver that accepts the connection and never answers is the worst case: the attempt ends
 * at the limit, the connection is closed by us, it is retried like any failure, and nothing else waits.
 */
import { createServer, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { eventually } from "../webhooks/receiver.js";

describe.each(DATABASES)("faults: a webhook receiver that never answers ($name)", (database) => {
  const t = useTestApp(database, {
    PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
    PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
    PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 500,
  });
  const sockets: { socket: Socket; openedAt: number; closedAt?: number; bytes: number }[] = [];
  const silent = createServer((socket) => {
    const entry: (typeof sockets)[number] = { socket, openedAt: Date.now(), bytes: 0 };
    sockets.push(entry);
    // Read everything, answer nothing.
    socket.on("data", (chunk) => {
      entry.bytes += chunk.length;
    });
    socket.on("close", () => {
      entry.closedAt = Date.now();
    });
  });
  let url = "";
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(silent.address() as { port: number }).port}/hook`;
  });
  afterEach(async () => {
    for (const { socket } of sockets.splice(0)) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it("each attempt ends at the time limit, closes its connection, is retried, and reads go on meanwhile", async () => {
    const created = await t.request("POST", "/api/v2/webhooks", { body: { url, events: ["prompt.created"] } });
    expect(created.status).toBe(201);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const [delivery] = await eventually(
      async () => (await t.request("GET", `/api/v2/webhooks/${created.body.data.id}/deliveries`)).body.data.deliveries,
      (list: any[]) => list[0]?.attempts >= 2,
    );
    expect(delivery).toMatchObject({
      status: "pending",
      last_response_code: null,
      last_error: "timed out after 500 ms",
    });
    // The receiver got the request; we closed each connection when the attempt's time was up, not it. (The
    // limit counts from before connecting, so under load a connection may be accepted late: no lower bound.)
    // Our side records the attempt before the receiver's socket sees the close, so wait for the close.
    const ended = await eventually(
      async () =>
        sockets
          .filter((s) => s.closedAt !== undefined)
          .map(({ openedAt, closedAt, bytes }) => ({ openedAt, closedAt, bytes })),
      (list) => list.length >= 2,
    );
    expect(ended.length).toBeGreaterThanOrEqual(2);
    expect(ended.some((s) => s.bytes > 0)).toBe(true);
    for (const s of ended) expect((s.closedAt as number) - s.openedAt).toBeLessThan(5_000);
    // The application's read is not held up by the hanging attempt.
    const read = await t.request("GET", "/api/v2/prompts/prompt-1");
    expect(read.status).toBe(200);
    expect(read.body.data.id).toBe("prompt-1");
  });
});
