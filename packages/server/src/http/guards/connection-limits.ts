import type { Server } from "node:http";
import { Socket as NetSocket, type Socket } from "node:net";
import type { FastifyServerOptions } from "fastify";
import type { Config } from "../../config.js";

/** What an unset PROMPTSTORE_MAX_CONNECTIONS_PER_IP means when no proxy stands in front. */
export const DEFAULT_MAX_CONNECTIONS_PER_IP = 256;

/**
 * The timeouts that keep a slow or silent client from holding a connection (and its descriptor) for long.
 * Node's own defaults leave a body that never finishes open forever and notice slow headers only every 30 s;
 * here every limit is seconds, and Node checks them four times within the shortest.
 */
export function connectionTimeouts(config: Config): Pick<
  FastifyServerOptions,
  "connectionTimeout" | "keepAliveTimeout" | "requestTimeout"
> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const requestTimeout = config.PROMPTSTORE_REQUEST_TIMEOUT_MS;
  // Node refuses a head timeout longer than the whole request's.
  const headersTimeout = Math.min(config.PROMPTSTORE_HEADERS_TIMEOUT_MS, requestTimeout);
  return {
    requestTimeout,
    connectionTimeout: config.PROMPTSTORE_IDLE_TIMEOUT_MS,
    keepAliveTimeout: config.PROMPTSTORE_KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout,
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(headersTimeout / 4))),
    },
  };
}

export function maxConnectionsPerIp(config: Config): number {
  return (
    config.PROMPTSTORE_MAX_CONNECTIONS_PER_IP ?? (config.PROMPTSTORE_TRUST_PROXY ? 0 : DEFAULT_MAX_CONNECTIONS_PER_IP)
  );
}

/**
 * Caps open connections in all (Node closes the ones beyond) and per client address, so that one client
 * opening connections by the hundred cannot use up the server's descriptors and starve the others. A refused
 * connection is closed before a byte is read: there is no request yet to answer.
 */
export function limitConnections(server: Server, config: Config, onRefused: () => void): void {
  server.maxConnections = config.PROMPTSTORE_MAX_CONNECTIONS;
  server.on("drop", onRefused);
  const perIp = maxConnectionsPerIp(config);
  if (perIp === 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > perIp) {
      onRefused();
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * A response that is a long-lived stream (the events stream, an MCP listen stream) is exempt from the idle
 * timeout: it may stay quiet between heartbeats for longer than a request may, and TCP keep-alive notices a
 * peer that vanished.
 */
export function keepStreamOpen(socket: Socket): void {
  // inject() (tests, embedders) has no real socket.
  if (!(socket instanceof NetSocket)) return;
  socket.setTimeout(0);
  socket.setKeepAlive(true, 30_000);
  socket.setNoDelay(true);
}
