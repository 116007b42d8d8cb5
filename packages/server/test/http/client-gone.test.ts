/**
 * `untilClientGoes` over real HTTP: the signal of an answer whose client closed the connection first is aborted,
 * with a 499 for the request log; an answer that went out whole never aborts it. The dashboard's search stops
 * between pieces on it (test/dashboard/prompt-search.test.ts).
 */
import { connect } from "node:net";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { untilClientGoes } from "../../src/http/client-gone.js";

describe("a signal for the work of one answer", () => {
  const app = Fastify();
  /** Each request's signal, once its handler has run; the handler waits for `open` before it answers. */
  const seen = new Map<string, AbortSignal>();
  let open: () => void = () => {};
  let port = 0;

  beforeAll(async () => {
    app.get("/slow/:name", async (request, reply) => {
      const signal = untilClientGoes(reply);
      seen.set((request.params as { name: string }).name, signal);
      await new Promise<void>((resolve) => {
        open = resolve;
      });
      return { done: true };
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(() => app.close());

  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it("is aborted when the client closes the connection before its answer, with a 499", async () => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write("GET /slow/left HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => seen.has("left"));
    const signal = seen.get("left") as AbortSignal;
    expect(signal.aborted).toBe(false);
    socket.destroy();
    await until(() => signal.aborted);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as { statusCode: number; message: string }).statusCode).toBe(499);
    expect((signal.reason as Error).message).toBe("the client closed the connection before its answer");
    open();
  });

  it("is never aborted for an answer that went out whole, even when the connection closes after it", async () => {
    const answer = fetch(`http://127.0.0.1:${port}/slow/stayed`, { headers: { connection: "close" } });
    await until(() => seen.has("stayed"));
    open();
    const res = await answer;
    expect(await res.json()).toEqual({ done: true });
    await new Promise((r) => setTimeout(r, 50));
    expect((seen.get("stayed") as AbortSignal).aborted).toBe(false);
  });
});
