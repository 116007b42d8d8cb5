/**
 * The client is tested against the real server: the `promptstore` binary started on a fresh database per
 * test (SQLite always, PostgreSQL when TEST_DATABASE_URL is set), with the API key it prints on its first
 * start. Whatever a test starts (servers, proxies, clients) is stopped after it.
 */
import { afterEach, beforeEach } from "vitest";
import { type RunningServer, startServer } from "../../../server/test/support/binary.js";
import type { TestDatabase } from "../../../server/test/support/databases.js";
import { Promptstore, type PromptstoreOptions } from "../../src/index.js";
import { startProxy, type TestProxy } from "./proxy.js";

export { DATABASES } from "../../../server/test/support/databases.js";

export interface Fixture {
  /** DATABASE_URL of this test's fresh database. */
  readonly databaseUrl: string;
  /** The key printed by the first server started on the database. */
  readonly key: string;
  /** Starts a server on this test's database (the first one bootstraps it); stopped after the test. */
  start(env?: Record<string, string>): Promise<RunningServer>;
  /** A proxy in front of `upstream`; closed after the test. */
  proxy(upstream: string): Promise<TestProxy>;
  /** A client with the test's key; closed after the test. */
  client(options: Partial<PromptstoreOptions> & { baseUrl: string }): Promptstore;
}

/** The server's environment for most tests: no rate limit (the 429 tests ask for the free plan). */
export const UNLIMITED = { PROMPTSTORE_DEFAULT_PLAN: "unlimited" };

export function useFixture(database: TestDatabase): Fixture {
  let drop = async () => {};
  const servers: RunningServer[] = [];
  const proxies: TestProxy[] = [];
  const clients: Promptstore[] = [];
  const state = { databaseUrl: "", key: "" };

  beforeEach(async () => {
    const created = await database.create();
    state.databaseUrl = created.url;
    state.key = "";
    drop = created.drop;
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const proxy of proxies.splice(0)) await proxy.close();
    for (const server of servers.splice(0)) await server.stop("SIGKILL");
    await drop();
  });

  return {
    get databaseUrl() {
      return state.databaseUrl;
    },
    get key() {
      return state.key;
    },
    async start(env = UNLIMITED) {
      const server = await startServer(state.databaseUrl, env);
      servers.push(server);
      const bootstrap = server.events.find((e) => e.event === "bootstrap");
      if (bootstrap) state.key = bootstrap.key.key;
      if (!state.key) throw new Error("no API key: the first server on a database prints it");
      return server;
    },
    async proxy(upstream) {
      const proxy = await startProxy(upstream);
      proxies.push(proxy);
      return proxy;
    },
    client(options) {
      const client = new Promptstore({ apiKey: state.key, ...options });
      clients.push(client);
      return client;
    },
  };
}

/** A `fetch` that records every request the client makes: legitimate instrumentation, not a mock. */
export function countingFetch(): { fetch: typeof fetch; calls: { method: string; url: string }[] } {
  const calls: { method: string; url: string }[] = [];
  return {
    calls,
    fetch: (input, init) => {
      calls.push({ method: init?.method ?? "GET", url: String(input) });
      return fetch(input, init);
    },
  };
}

/** Waits until `check` returns true, or fails after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const SECTIONS = [
  { title: "Role", content: "You help customers of {{ company }}." },
  { title: "Output Format", content: "Answer in {{ language }}, in three sentences or fewer." },
];

export function sections(tag: string) {
  return [
    { title: "Role", content: `You help customers of {{ company }}. (${tag})` },
    { title: "Output Format", content: "Answer in {{ language }}." },
  ];
}
