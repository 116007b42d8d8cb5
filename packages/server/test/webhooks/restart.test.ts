import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { type RunningServer, startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";
import { eventually, freePort, type Receiver, startReceiver, verify } from "./receiver.js";

const ENV = {
  PROMPTSTORE_DEFAULT_PLAN: "unlimited",
  PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: "true",
  PROMPTSTORE_WEBHOOK_RETRY_SCALE: "0.001",
  // A claim held by a killed server is free again after three timeouts: 1.5 s.
  PROMPTSTORE_WEBHOOK_TIMEOUT_MS: "500",
};

/**
 * The real binary, killed with SIGKILL while its deliveries are pending (the receiver down, or answering
 * 500), started again on the same database: every message arrives, once, in order.
 */
describe.each(DATABASES)("webhook deliveries across a SIGKILL and a restart ($name)", (database: TestDatabase) => {
  const env = useBinaryDatabase(database);

  async function api(server: RunningServer, key: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  for (const mode of ["down", "answering 500"] as const) {
    it(`loses nothing and sends nothing twice (receiver ${mode})`, async () => {
      const port = await freePort();
      let receiver: Receiver | undefined = mode === "down" ? undefined : await startReceiver(() => 500, port);
      try {
        env.server = await startServer(env.url, ENV);
        const key: string = env.server.events.find((e) => e.event === "bootstrap")?.key.key;
        const hook = await api(env.server, key, "POST", "/api/v2/webhooks", {
          url: `http://127.0.0.1:${port}/hook`,
          events: ["prompt.created", "prompt.version_saved", "prompt.published"],
        });
        expect(hook.status).toBe(201);
        const { id, secret } = hook.body.data;

        const expected: string[] = [];
        for (const name of ["alpha", "beta", "gamma"]) {
          const created = await api(env.server, key, "POST", "/api/v2/prompts", { name, markdown: "# Role\nv1" });
          expect(created.status).toBe(201);
          const saved = await api(env.server, key, "PUT", `/api/v2/prompts/${name}`, {
            markdown: "# Role\nv2",
            publish: true,
          });
          expect(saved.status).toBe(200);
          expected.push(`prompt.created ${name}`, `prompt.version_saved ${name}`, `prompt.published ${name}`);
        }
        // Attempts have begun and failed: the first message is being retried, the rest wait behind it.
        const store = await openStore(env.url);
        try {
          await eventually(
            () => store.db.selectFrom("webhook_deliveries").select(["attempts", "status"]).orderBy("id").execute(),
            (rows) => rows.length === 9 && (rows[0]?.attempts ?? 0) >= 2,
          );
        } finally {
          await store.close();
        }
        await env.server.stop("SIGKILL");
        env.server = undefined;

        // The receiver comes back; the server comes back on the same database and picks up the queue.
        await receiver?.close();
        receiver = await startReceiver(() => 200, port);
        const restarted = await startServer(env.url, ENV);
        env.server = restarted;
        const up = receiver;
        await up.waitFor(() => up.delivered().length === expected.length, 20_000);
        await new Promise((r) => setTimeout(r, 500));

        expect(up.requests.map((r) => r.status)).toEqual(new Array(expected.length).fill(200));
        const bodies = up.requests.map((r) => verify(secret, r) as { type: string; data: { prompt_id: string } });
        expect(bodies.map((b) => `${b.type} ${b.data.prompt_id}`)).toEqual(expected);
        const messageIds = up.requests.map((r) => r.headers["webhook-id"]);
        expect(new Set(messageIds).size).toBe(expected.length);

        type Listed = { status: string; attempts: number; last_response_code: number; event_id: number };
        const listed = await eventually<Listed[]>(
          async () => (await api(restarted, key, "GET", `/api/v2/webhooks/${id}/deliveries`)).body.data.deliveries,
          (list) => list.every((d) => d.status === "delivered"),
        );
        expect(listed.map((d) => d.status)).toEqual(new Array(expected.length).fill("delivered"));
        const oldest = listed.at(-1)!;
        expect(oldest.attempts).toBeGreaterThanOrEqual(3);
        expect(oldest.last_response_code).toBe(200);
        expect(`msg_${oldest.event_id}`).toBe(messageIds[0]);
      } finally {
        await receiver?.close();
      }
    });
  }
});
