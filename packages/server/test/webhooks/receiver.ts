/**
 * A real webhook receiver on loopback: a node:http server that records every request and answers what the
 * test tells it to. Tests that use it start the server with PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** What this receiver answered; 0 until it has. */
  status: number;
}

/** Answers a request: a status (empty body), or takes the response over (return nothing). */
export type Responder = (request: Received, index: number, res: ServerResponse) => number | undefined;

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  respond: Responder;
  /** Requests answered 2xx, by webhook-id, in arrival order. */
  delivered(): Received[];
  /** Resolves once `predicate` holds, or rejects after `timeoutMs` saying what was received. */
  waitFor(predicate: (requests: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => 204, port = 0): Promise<Receiver> {
  const requests: Received[] = [];
  const receiver: Receiver = {
    url: "",
    port: 0,
    requests,
    respond,
    delivered: () => requests.filter((r) => r.status >= 200 && r.status < 300),
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(requests)) {
        if (Date.now() > deadline) {
          throw new Error(
            `receiver: condition not met in ${timeoutMs} ms; got ${JSON.stringify(requests.map((r) => [r.headers["webhook-id"], r.status]))}`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received: Received = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status: 0 };
      const answer = receiver.respond(received, requests.length, res);
      requests.push(received);
      if (answer === undefined) {
        // The test answers (or never does): the status is what was sent, once it was.
        res.on("finish", () => {
          received.status = res.statusCode;
        });
        return;
      }
      received.status = answer;
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Verifies a request as a receiver would, with the standardwebhooks library; returns the parsed body. */
export function verify(secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  });
}

/** A port nothing listens on right now (a receiver that is down). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until `done` accepts its value; returns that value. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`eventually: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await sleep(25);
  }
}
