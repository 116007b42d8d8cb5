import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp } from "../support/mcp.js";
import { openEventStream } from "../support/sse.js";
import { waitFor } from "../support/wait.js";

/** A client connection held open by the test, with when (ms after opening) the server closed it. */
interface Held {
  socket: net.Socket;
  received: string;
  /** Resolves with the ms from connecting to the server closing it. */
  closed: Promise<number>;
  isClosed(): boolean;
}

function hold(port: number, localAddress = "127.0.0.1"): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress });
    const opened = Date.now();
    let done = false;
    const held: Held = {
      socket,
      received: "",
      closed: new Promise((r) =>
        socket.once("close", () => {
          done = true;
          r(Date.now() - opened);
        }),
      ),
      isClosed: () => done,
    };
    socket.on("data", (chunk) => {
      held.received += chunk.toString();
    });
    socket.on("error", () => {});
    socket.once("connect", () => resolve(held));
    socket.once("error", reject);
  });
}

/** Writes `text` a byte at a time, one every `everyMs`, until done or the socket closes. */
function dribble(held: Held, text: string, everyMs: number): NodeJS.Timeout {
  let at = 0;
  const timer = setInterval(() => {
    if (at >= text.length || held.socket.destroyed) return clearInterval(timer);
    held.socket.write(text[at++] as string);
  }, everyMs);
  return timer;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DATABASES)("slow and silent clients ($name)", (database) => {
  let t: TestApp | undefined;
  let port = 0;
  const sockets: Held[] = [];
  const timers: NodeJS.Timeout[] = [];

  const start = async (overrides: Partial<Config> = {}) => {
    t = await testApp(database, overrides);
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    port = Number(new URL(url).port);
    return url;
  };
  afterEach(async () => {
    for (const timer of timers.splice(0)) clearInterval(timer);
    for (const held of sockets.splice(0)) held.socket.destroy();
    await t?.close();
    t = undefined;
  });

  const open = async (localAddress?: string) => {
    const held = await hold(port, localAddress);
    sockets.push(held);
    return held;
  };

  it("keeps answering a normal client within 1 s while 500 slow connections are open", async () => {
    const url = await start();
    const unlimited = await t!.newProject({ plan: "unlimited" });
    await t!.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }), key: unlimited.key });
    // 250 from each of two addresses, under the per-address cap: every one of them is accepted and held.
    const slow: Held[] = [];
    for (let n = 0; n < 500; n++) slow.push(await open(n % 2 === 0 ? "127.0.0.2" : "127.0.0.3"));
    slow.forEach((held, n) => {
      const text =
        n % 2 === 0
          ? // Headers a byte at a time.
            "GET /api/v2/prompts HTTP/1.1\r\nHost: localhost\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"
          : // A body promised at 1 000 000 bytes, with a valid key, sent a byte at a time.
            `PUT /api/v2/prompts/p HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${unlimited.key}\r\n` +
            `content-type: application/json\r\ncontent-length: 1000000\r\n\r\n${"{".padEnd(1000, " ")}`;
      timers.push(dribble(held, text, 200));
    });

    const timings: number[] = [];
    for (let n = 0; n < 10; n++) {
      const began = performance.now();
      const res = await fetch(`${url}/api/v2/prompts/p`, { headers: { "x-api-key": unlimited.key } });
      expect(res.status).toBe(200);
      await res.json();
      timings.push(performance.now() - began);
      await sleep(100);
    }
    expect(Math.max(...timings)).toBeLessThan(1_000);
    // None of the slow connections was refused or dropped along the way: the server carried all of them.
    expect(slow.filter((held) => held.isClosed())).toHaveLength(0);
  }, 60_000);

  it("closes a body that never finishes within the request timeout, with a 408", async () => {
    await start({ PROMPTSTORE_REQUEST_TIMEOUT_MS: 1_500, PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const held = await open();
    held.socket.write(
      `PUT /api/v2/prompts/p HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${t!.key}\r\n` +
        "content-type: application/json\r\ncontent-length: 1000000\r\n\r\n0123456789",
    );
    // Keeps trickling, so only the whole-request limit (not the idle one) can end it.
    timers.push(dribble(held, " ".repeat(1000), 200));
    const closedAfter = await held.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(1_400);
    expect(closedAfter).toBeLessThan(2_500);
    expect(held.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(held.received).toContain('"error":"request: not received in time"');
  }, 20_000);

  it("closes slow headers within the headers timeout, with a 408", async () => {
    await start({ PROMPTSTORE_HEADERS_TIMEOUT_MS: 1_000 });
    const held = await open();
    timers.push(dribble(held, `GET /api/v2/prompts HTTP/1.1\r\nHost: localhost\r\nX-Long: ${"a".repeat(200)}`, 100));
    const closedAfter = await held.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(1_800);
    expect(held.received).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it("closes a connection that says nothing within the idle timeout", async () => {
    await start({ PROMPTSTORE_IDLE_TIMEOUT_MS: 800 });
    const held = await open();
    const closedAfter = await held.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(700);
    expect(closedAfter).toBeLessThan(1_800);
  }, 20_000);

  it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
    await start({ PROMPTSTORE_KEEP_ALIVE_TIMEOUT_MS: 500 });
    const held = await open();
    held.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    await waitFor(() => held.received.includes("\r\n\r\n"));
    const closedAfter = await held.closed;
    expect(held.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedAfter).toBeGreaterThanOrEqual(450);
    // Node keeps the socket a second longer than it advertises (its keep-alive timeout buffer).
    expect(closedAfter).toBeLessThan(2_500);
  }, 20_000);

  it("caps the connections one address holds; other addresses still get in", async () => {
    const url = await start({ PROMPTSTORE_MAX_CONNECTIONS_PER_IP: 5 });
    const kept = [];
    for (let n = 0; n < 5; n++) kept.push(await open("127.0.0.2"));
    const refused = await open("127.0.0.2");
    expect(await refused.closed).toBeLessThan(500);
    expect(refused.received).toBe("");
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(kept.filter((held) => held.isClosed())).toHaveLength(0);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain("\npromptstore_connections_refused_total 1\n");
    // A slot freed by a closed connection is free again.
    kept[0]!.socket.destroy();
    await kept[0]!.closed;
    await sleep(50);
    const again = await open("127.0.0.2");
    again.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    await again.closed;
    expect(again.received).toMatch(/^HTTP\/1\.1 200 /);
  }, 20_000);

  it("caps the connections in all", async () => {
    await start({ PROMPTSTORE_MAX_CONNECTIONS: 3 });
    for (let n = 0; n < 3; n++) await open();
    const refused = await open("127.0.0.2");
    expect(await refused.closed).toBeLessThan(500);
    expect(sockets.slice(0, 3).filter((held) => held.isClosed())).toHaveLength(0);
  }, 20_000);

  it("keeps an events stream open past the idle timeout", async () => {
    // Heartbeats further apart than the idle timeout: only the stream's exemption keeps it open.
    const url = await start({ PROMPTSTORE_IDLE_TIMEOUT_MS: 300, PROMPTSTORE_EVENTS_HEARTBEAT_MS: 5_000 });
    const stream = await openEventStream(url, t!.key);
    expect(stream.status).toBe(200);
    await stream.next((e) => e.event === "ready");
    await sleep(1_200);
    const created = await t!.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "late" }) });
    expect(created.status).toBe(201);
    const event = await stream.next((e) => e.event === "prompt.created");
    expect(JSON.parse(event.data!).prompt_id).toBe("late");
    stream.close();
  }, 20_000);

  it("keeps an MCP listen stream open past the idle timeout", async () => {
    const url = await start({ PROMPTSTORE_IDLE_TIMEOUT_MS: 300 });
    const client = await connectMcp(url, t!.key, "2026-07-28");
    try {
      let heard = 0;
      client.setNotificationHandler("notifications/prompts/list_changed", () => {
        heard++;
      });
      await client.listen({ promptsListChanged: true });
      await sleep(1_200);
      await t!.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "late" }) });
      await waitFor(() => heard === 1);
    } finally {
      await client.close();
    }
  }, 20_000);
});
