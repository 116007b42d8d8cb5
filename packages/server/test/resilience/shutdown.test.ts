import net from "node:net";
import { describe, expect, it } from "vitest";
import { startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";

describe.each(DATABASES)("graceful shutdown on SIGTERM ($name)", (database: TestDatabase) => {
  const env = useBinaryDatabase(database);

  it("finishes the requests in flight, stops accepting, closes the database and exits 0", async () => {
    // The deadline is far beyond the test's timeout: the shutdown must drain, not be cut short by it.
    env.server = await startServer(env.url, {
      PROMPTSTORE_DEFAULT_PLAN: "unlimited",
      PROMPTSTORE_SHUTDOWN_TIMEOUT_MS: "600000",
    });
    const key: string = env.server!.events.find((e) => e.event === "bootstrap")?.key.key;
    const url = env.server!.url;
    await fetch(`${url}/api/v2/prompts`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ id: "p", name: "p", markdown: "# A\nx" }),
    });

    // 40 saves in flight when the signal arrives.
    const inFlight = Array.from({ length: 40 }, (_, n) =>
      fetch(`${url}/api/v2/prompts/p`, {
        method: "PUT",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ markdown: `# A\nsave ${n}` }),
      }).then(
        async (res) => ({
          status: res.status,
          version: ((await res.json()) as any).data?.version as string | undefined,
        }),
        () => ({ status: 0, version: undefined }),
      ),
    );
    // Signal once the server is demonstrably in the middle of the batch (one save answered, the rest in
    // flight): a fixed delay could fire before any connection was accepted on a loaded machine.
    await Promise.race(inFlight);
    const exit = env.server!.stop("SIGTERM");
    const results = await Promise.all(inFlight);
    expect(await exit).toBe(0);
    env.server = undefined;

    // Every request got a real answer (2xx) or was never accepted (0); none failed half-way with a 5xx.
    expect(results.every((r) => r.status === 200 || r.status === 0)).toBe(true);
    const saved = results.filter((r) => r.status === 200);
    expect(saved.length).toBeGreaterThan(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();

    // What was answered was committed.
    env.server = await startServer(env.url);
    for (const r of saved) {
      const res = await fetch(`${env.server!.url}/api/v2/prompts/p?version=${r.version}`, {
        headers: { "x-api-key": key },
      });
      expect(res.status).toBe(200);
    }
  });

  it("closes a connection still busy at PROMPTSTORE_SHUTDOWN_TIMEOUT_MS and exits", async () => {
    env.server = await startServer(env.url, { PROMPTSTORE_SHUTDOWN_TIMEOUT_MS: "500" });
    const key: string = env.server!.events.find((e) => e.event === "bootstrap")?.key.key;
    const { port } = new URL(env.server!.url);
    // A body that never finishes: the request stays in flight for as long as the server lets it.
    const socket = net.connect(Number(port), "127.0.0.1");
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.on("error", () => {});
    await new Promise<void>((resolve) => socket.on("connect", () => resolve()));
    socket.write(
      `POST /api/v2/prompts HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${key}\r\n` +
        'content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"name":',
    );
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    expect(await env.server!.stop("SIGTERM")).toBe(0);
    const took = Date.now() - started;
    await closed;
    // The deadline fired (and said so), not a drain that happened to finish: 500 ms, not never.
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(5_000);
    expect(env.server!.logs.map((l) => l.msg)).toContain(
      "shutdown deadline reached: closing the remaining connections",
    );
    env.server = undefined;
  });
});
