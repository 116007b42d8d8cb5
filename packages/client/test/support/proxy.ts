/**
 * A small HTTP proxy in front of the real server, for what the server cannot be made to do on demand: answer
 * 500 once, answer late, or be unreachable at a stable address while the server behind it is killed and
 * started again (on a new port). Everything else is forwarded to the real server as is, streams included.
 * It records every request it sees, so tests can count them and read their headers.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Date.now() when it arrived. */
  at: number;
}

/** What an intercepting handler answers: a status, headers, and a JSON body. */
export interface InterceptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** A request an intercepting handler is given, its body read whole. */
export interface InterceptedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestProxy {
  readonly url: string;
  /** Where requests go; change it after restarting the server. */
  upstream: string;
  /** While true, every connection is closed at once, as an unreachable server's would be. */
  down: boolean;
  readonly requests: SeenRequest[];
  /** Answers the next `count` requests whose path starts with `prefix` with `status` and a failure envelope (and `headers`). */
  failNext(count: number, status: number, prefix?: string, headers?: Record<string, string>): void;
  /** Holds the next `count` requests whose path starts with `prefix` for `ms` before forwarding them. */
  delayNext(count: number, ms: number, prefix?: string): void;
  /** Requests seen whose path starts with `prefix` (query included in the path). */
  count(prefix: string): number;
  /** Connections refused while `down`. */
  readonly refused: number;
  /** Changes the headers of requests before they are forwarded (`Last-Event-ID`, say). */
  rewrite: ((path: string, headers: IncomingHttpHeaders) => IncomingHttpHeaders) | undefined;
  /** Event streams (changes, an evaluation's progress) open through the proxy. */
  readonly openStreams: number;
  /**
   * Answers the requests whose path starts with `prefix` itself, with `handler`'s answer, instead of forwarding
   * them (an endpoint the server behind does not have yet, say). Failures and delays above apply first.
   */
  intercept(prefix: string, handler: (request: InterceptedRequest) => InterceptedAnswer): void;
  /** Breaks every open event stream, as a network failure would; the server is unaffected. */
  dropStreams(): void;
  close(): Promise<void>;
}

interface Rule {
  remaining: number;
  prefix: string;
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export async function startProxy(upstream: string): Promise<TestProxy> {
  const sockets = new Set<Socket>();
  const streams = new Set<ServerResponse>();
  let refused = 0;
  const failures: Rule[] = [];
  const handlers: { prefix: string; handler: (request: InterceptedRequest) => InterceptedAnswer }[] = [];
  const delays: Rule[] = [];
  let failureNumber = 0;
  const take = (rules: Rule[], path: string): Rule | undefined => {
    const rule = rules.find((r) => r.remaining > 0 && path.startsWith(r.prefix));
    if (rule) rule.remaining--;
    return rule;
  };

  const proxy: TestProxy = {
    url: "",
    upstream,
    down: false,
    requests: [],
    failNext(count, status, prefix = "/", headers = {}) {
      failures.push({ remaining: count, prefix, status, headers });
    },
    delayNext(count, ms, prefix = "/") {
      delays.push({ remaining: count, prefix, delayMs: ms });
    },
    count(prefix) {
      return proxy.requests.filter((r) => r.path.startsWith(prefix)).length;
    },
    get refused() {
      return refused;
    },
    rewrite: undefined,
    intercept(prefix, handler) {
      handlers.push({ prefix, handler });
    },
    get openStreams() {
      return streams.size;
    },
    dropStreams() {
      for (const res of streams) res.destroy();
    },
    async close() {
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer(async (req, res) => {
    const path = req.url ?? "/";
    if (proxy.down) {
      refused++;
      req.socket.destroy();
      return;
    }
    proxy.requests.push({ method: req.method ?? "GET", path, headers: req.headers, at: Date.now() });
    const failure = take(failures, path);
    if (failure) {
      failureNumber++;
      res.writeHead(failure.status as number, {
        "content-type": "application/json",
        "x-request-id": `proxy-failure-${failureNumber}`,
        ...failure.headers,
      });
      res.end(JSON.stringify({ success: false, error: `injected failure ${failure.status}` }));
      return;
    }
    const delay = take(delays, path);
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay.delayMs));
    if (req.socket.destroyed) return;
    const intercepted = handlers.find((h) => path.startsWith(h.prefix));
    if (intercepted) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString("utf8");
      const answer = intercepted.handler({ method: req.method ?? "GET", path, headers: req.headers, body });
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(JSON.stringify(answer.body));
      return;
    }
    const target = new URL(path, proxy.upstream);
    const headers = proxy.rewrite ? proxy.rewrite(path, { ...req.headers }) : req.headers;
    // The change-event stream, and an evaluation's progress stream.
    if (path.startsWith("/api/v2/events") || /^\/api\/v2\/evaluations\/[^/]+\/events/.test(path)) {
      streams.add(res);
      res.on("close", () => streams.delete(res));
    }
    const upstreamReq = httpRequest(
      target,
      { method: req.method, headers: { ...headers, host: target.host } },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        res.flushHeaders();
        upstreamRes.pipe(res);
        // The server died mid-answer (a stream, typically): the client's connection breaks too.
        upstreamRes.on("close", () => {
          if (!upstreamRes.complete) res.destroy();
        });
      },
    );
    // The server cannot be reached: the client sees its connection closed, not a made-up status.
    upstreamReq.on("error", () => req.socket.destroy());
    res.on("close", () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.pipe(upstreamReq);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    if (proxy.down) {
      refused++;
      socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  (proxy as { url: string }).url = `http://127.0.0.1:${port}`;
  return proxy;
}
