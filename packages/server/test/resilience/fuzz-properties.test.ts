/**
 * Property-based tests (issue 11, "hostile input, tried systematically"): generated requests to every
 * endpoint (v1, v2 with webhooks and deletion, MCP tools and prompts, the events stream, the dashboard API
 * with a signed-in session and its CSRF token), through app.inject and, for what only a socket shows (header
 * sizes, duplicated and odd headers, streaming), a real listening server.
 *
 * After each request: no 5xx, the failure envelope and X-Request-Id on every refusal, no stack trace or path
 * of this machine in any answer, the store byte-for-byte unchanged (every table dumped before and after)
 * whenever the request was refused, and never a trace of the other project (its prompts share an id with
 * ours and carry a marker that no generator can produce).
 *
 * The requests share one store (state is the point), so a failure is reported as generated, not shrunk
 * (`endOnFailure`): a smaller request replayed on a later state would not be the one that failed.
 * The seed is printed; `FUZZ_SEED=<n>` replays a run, `FUZZ_SCALE=<x>` multiplies the number of requests.
 */
import { type AddressInfo, connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { newUser, signIn } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import {
  dumpStore,
  type FuzzRequest,
  type FuzzWorld,
  fuzzRequest,
  INTERNALS,
  mcpMessage,
  nastyString,
  pathId,
  queryString,
} from "../support/fuzz.js";
import { parseResponses } from "../support/raw-http.js";

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
/** Requests per database: SQLite runs the full budget, PostgreSQL a slice of it. */
const BUDGET = {
  sqlite: { rest: 6_500, mcp: 2_300, socket: 300, events: 120 },
  postgres: { rest: 900, mcp: 300, socket: 60, events: 30 },
};
const MARKER = "QQ-OTHER-PROJECT-7c1e";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let total = 0;
/** Answers by surface and status, printed at the end: shows what the generators actually reached. */
const tally = new Map<string, number>();
function count(url: string, status: number): void {
  total++;
  const surface = /^\/api\/(v1|v2\/mcp|v2\/events|v2\/webhooks|v2\/prompts|dashboard)/.exec(url)?.[1] ?? "other";
  const key = `${surface} ${status}`;
  tally.set(key, (tally.get(key) ?? 0) + 1);
}
console.log(`fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
afterAll(() => {
  const lines = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`);
  console.log(`fuzz: ${total} generated requests answered, seed ${SEED}\n${lines.join("\n")}`);
});

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** The invariants every answer keeps, whatever was sent. */
function checkAnswer(request: { method: string; url: string }, res: Answer): void {
  const where = `${request.method} ${request.url.slice(0, 200)} → ${res.status} ${res.body.slice(0, 300)}`;
  expect(res.status, where).toBeGreaterThanOrEqual(200);
  expect(res.status, where).toBeLessThan(500);
  expect(String(res.headers["x-request-id"]), where).toMatch(UUID);
  expect(res.body, where).not.toMatch(INTERNALS);
  expect(res.body, where).not.toContain(MARKER);
  if (res.status >= 400 && request.method !== "HEAD") {
    const body = JSON.parse(res.body);
    // The MCP SDK refuses what is not JSON-RPC in JSON-RPC's own error shape, as the MCP spec asks.
    if (request.url.startsWith("/api/v2/mcp") && body.jsonrpc === "2.0") {
      expect(body.error.code, where).not.toBe(-32603);
      return;
    }
    expect(Object.keys(body).sort(), where).toEqual(["error", "success"]);
    expect(body.success, where).toBe(false);
    expect(typeof body.error, where).toBe("string");
    expect(body.error, where).not.toMatch(/^internal error/);
  }
}

/** The JSON-RPC messages of an MCP answer (plain JSON, or SSE `data:` lines). */
function rpcMessages(res: Answer): any[] {
  const type = String(res.headers["content-type"] ?? "");
  if (res.body === "") return [];
  if (type.startsWith("text/event-stream")) {
    return res.body
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .flatMap((l) => [JSON.parse(l.slice(6))].flat());
  }
  return [JSON.parse(res.body)].flat();
}

/** True when every JSON-RPC answer is an error or a tool error: nothing may have changed. */
function mcpRefused(messages: any[]): boolean {
  return messages.every((m) => m.error !== undefined || m.result?.isError === true);
}

describe.each(DATABASES)("generated hostile requests ($name)", (database) => {
  const budget = BUDGET[database.name];
  const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
  let t: TestApp;
  let world: FuzzWorld;
  let port: number;
  let baseline: string;

  beforeAll(async () => {
    t = await testApp(database, { PROMPTSTORE_EVENTS_HEARTBEAT_MS: 100 });
    await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.server.address() as AddressInfo).port;
    const main = await t.newProject({ plan: "unlimited" });
    const spare = await t.app.tenants.createApiKey(main.projectId);
    const other = await t.newProject({ plan: "unlimited" });
    const api = (key: string, method: string, url: string, body?: unknown) =>
      t.request(method, url, { key, ...(body === undefined ? {} : { body }) });

    // Ours: published, unpublished, and an id the other project uses too.
    const hashes: string[] = [];
    for (const id of ["alpha", "beta", "shared-id"]) {
      const res = await api(main.key, "POST", "/api/v2/prompts", {
        id,
        name: `Ours ${id}`,
        sections: [{ title: "Role", content: `Hello {{ name }} from ${id}` }],
        publish: id === "alpha",
      });
      expect(res.status).toBe(201);
      hashes.push(res.body.data.version);
    }
    const saved = await api(main.key, "PUT", "/api/v2/prompts/alpha", { markdown: "# Role\nSecond" });
    hashes.push(saved.body.data.version);
    // Theirs: the marker everywhere a generated request might make it show up.
    for (const id of ["shared-id", "other-only"]) {
      const res = await api(other.key, "POST", "/api/v2/prompts", {
        id,
        name: `${MARKER} name`,
        description: `${MARKER} description`,
        sections: [
          { title: MARKER.replaceAll("-", "_"), content: `${MARKER} content {{ ${MARKER.replaceAll("-", "_")} }}` },
        ],
        publish: true,
      });
      expect(res.status).toBe(201);
      hashes.push(res.body.data.version);
    }
    // Disabled endpoints: nothing is sent anywhere while the fuzz runs.
    const ours = await api(main.key, "POST", "/api/v2/webhooks", {
      url: "https://hooks.example/ours",
      events: ["prompt.published"],
      enabled: false,
    });
    expect(ours.status).toBe(201);
    const theirs = await api(other.key, "POST", "/api/v2/webhooks", {
      url: `https://${MARKER.toLowerCase()}.example/theirs`,
      description: MARKER,
      events: ["prompt.published"],
      enabled: false,
    });
    expect(theirs.status).toBe(201);

    const owner = await signIn(t, await newUser(t, main.orgId, "owner"));
    const colleague = await t.app.accounts.createUser(`colleague-${SEED}@example.com`, "a long enough password");
    await t.app.accounts.store.addMembership(main.orgId, colleague!.user.id, "viewer");
    world = {
      mainProjectId: main.projectId,
      otherProjectId: other.projectId,
      orgId: main.orgId,
      otherOrgId: other.orgId,
      key: main.key,
      readKey: (await t.app.tenants.createApiKey(main.projectId, { scope: "read" })).key,
      promptIds: ["alpha", "beta", "shared-id", "other-only", "missing", "gamma"],
      hashes,
      webhookIds: [ours.body.data.id, theirs.body.data.id, "wh_missing"],
      // Never the key the fuzz uses, nor the signed-in owner: revoking those would end the run's reach.
      keyIds: [spare.id, other.keyId, "k_missing"],
      userIds: [colleague!.user.id, "u_missing"],
      session: { cookie: owner.cookie, csrf: owner.csrf },
    };
    baseline = await dumpStore(t.store);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  /** Sends one request through inject; checks the invariants and the store. */
  async function injectAndCheck(request: FuzzRequest, refusedWhen: (res: Answer) => boolean): Promise<Answer> {
    const res = await t.app.server.inject({
      method: request.method as "GET",
      url: request.url,
      headers: request.headers,
      ...(request.payload !== undefined ? { payload: request.payload } : {}),
    });
    count(request.url, res.statusCode);
    const answer = { status: res.statusCode, headers: res.headers, body: res.body };
    checkAnswer(request, answer);
    const after = await dumpStore(t.store);
    const unchanged = after === baseline;
    baseline = after;
    if (refusedWhen(answer)) {
      expect(unchanged, `store changed by refused ${request.method} ${request.url.slice(0, 200)}`).toBe(true);
    }
    return answer;
  }

  it("REST and dashboard: every route, generated paths, queries, headers and bodies", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest(world), async (request) => {
        // Signing the fuzz's own session out would leave the rest of the run outside the dashboard.
        if (request.method === "DELETE" && request.url.startsWith("/api/dashboard/session")) {
          delete request.headers.cookie;
        }
        await injectAndCheck(
          request,
          (res) => res.status >= 400 || request.method === "GET" || request.method === "HEAD",
        );
      }),
      { seed: SEED, numRuns: runs(budget.rest), endOnFailure: true },
    );
  }, 300_000);

  it("MCP: JSON-RPC with generated params to every tool and prompt", async () => {
    const headers = fc.record({
      "x-api-key": fc.oneof({ weight: 9, arbitrary: fc.constant(world.key) }, fc.constantFrom("ps_nope", "")),
      "content-type": fc.oneof(
        { weight: 9, arbitrary: fc.constant("application/json") },
        fc.constantFrom("text/plain", "application/json; charset=utf-16"),
      ),
      accept: fc.oneof(
        { weight: 9, arbitrary: fc.constant("application/json, text/event-stream") },
        fc.constantFrom("*/*", "text/html"),
      ),
      "mcp-protocol-version": fc.constantFrom("2025-06-18", "2025-03-26", "2026-07-28", "1999-01-01"),
      host: fc.oneof({ weight: 9, arbitrary: fc.constant("localhost") }, fc.constantFrom("#", "[", "x:1:2", "a@b")),
    });
    await fc.assert(
      fc.asyncProperty(mcpMessage(world), headers, async (payload, headers) => {
        const request = { method: "POST", url: "/api/v2/mcp", headers, payload };
        await injectAndCheck(request, (res) => {
          if (res.status >= 400) return true;
          const messages = rpcMessages(res);
          for (const m of messages) {
            // -32603 is JSON-RPC's internal error: a server fault, never the client's.
            expect(m.error?.code, JSON.stringify(m).slice(0, 300)).not.toBe(-32603);
            const text = m.result?.isError ? String(m.result.content?.[0]?.text) : "";
            expect(text, payload.slice(0, 200)).not.toMatch(/internal error/i);
          }
          return mcpRefused(messages);
        });
      }),
      { seed: SEED, numRuns: runs(budget.mcp), endOnFailure: true },
    );
  }, 300_000);

  it("real sockets: long, duplicated and odd headers, raw bytes in the path, body framing", async () => {
    const line = fc.oneof(
      fc.constant(`x-api-key: ${world.key}`),
      fc.constantFrom(
        "x-api-key: ps_nope",
        `x-api-key: ${world.key}`,
        "Host: second",
        "Host: #",
        "Host: [",
        "Host: a@b",
      ),
      fc.integer({ min: 1, max: 20_000 }).map((n) => `X-Long: ${"a".repeat(n)}`),
      fc.array(fc.constant("X-Dup: v"), { minLength: 2, maxLength: 200 }).map((l) => l.join("\r\n")),
      fc.constantFrom(
        "Expect: 100-continue",
        "Expect: foo",
        "Content-Type: application/json; charset=utf-16",
        "Content-Type: text/plain",
        "Content-Type: application/json",
        "Last-Event-ID: 1",
        "Bad Header: x",
        ": empty",
        "X-Nul: a\u0000b",
      ),
    );
    /** Framing headers with the bytes that go with them (a declared body that never comes is another test's). */
    const framing = fc.constantFrom<[string[], string]>(
      [["Content-Length: 5"], "hello"],
      [["Content-Length: -1"], ""],
      [["Content-Length: 1, 2"], "ab"],
      [["Content-Length: 2", "Content-Length: 3"], "abc"],
      [["Content-Length: 0x2"], "{}"],
      [["Transfer-Encoding: chunked"], "2\r\n{}\r\n0\r\n\r\n"],
      [["Transfer-Encoding: chunked", "Content-Length: 3"], "0\r\n\r\n"],
      [["Transfer-Encoding: gzip"], ""],
      [["Transfer-Encoding: chunked"], "zz\r\n"],
      [["Transfer-Encoding: chunked, chunked"], "0\r\n\r\n"],
    );
    const target = fc.oneof(
      pathId(world.promptIds).map((id) => `/api/v2/prompts/${id}`),
      pathId(world.promptIds).map((id) => `/api/v1/prompts/${id}`),
      pathId(world.webhookIds).map((id) => `/api/v2/webhooks/${id}`),
      fc.constantFrom("/api/v2/mcp", "/api/v2/prompts", "/healthz", "*", "http://localhost/api/v2/prompts"),
      fc.constantFrom("/api/v2/prompts/\u00e9t\u00e9", "/api/v2/prompts/\u00ff\u00fe", "/api/v2/prompts/a\u0001b"),
    );
    const raw = fc.record({
      method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "GeT", "BREW"),
      target,
      query: queryString(world.hashes),
      lines: fc.array(line, { maxLength: 4 }),
      body: fc.oneof(
        fc.constant(undefined),
        nastyString.map((s) => s.slice(0, 2_000)),
        framing,
      ),
    });
    await fc.assert(
      fc.asyncProperty(raw, async ({ method, target, query, lines, body }) => {
        const head = [`${method} ${target}${query} HTTP/1.1`, "Host: localhost", ...lines, "Connection: close"];
        let text = "";
        if (Array.isArray(body)) {
          head.push(...body[0]);
          text = body[1];
        } else if (body !== undefined && body !== "") {
          text = body;
          head.push(`Content-Length: ${Buffer.byteLength(text)}`);
        }
        // latin1: the bytes of the request line as written (raw non-ASCII bytes in the path included).
        const bytes = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), Buffer.from(text)]);
        const res = await exchange(port, bytes, method === "HEAD").catch((error) => {
          throw new Error(`${head.join(" | ").slice(0, 300)}: ${error}`);
        });
        count(target, res.status);
        checkAnswer({ method, url: `${target}${query}` }, res);
        const after = await dumpStore(t.store);
        const unchanged = after === baseline;
        baseline = after;
        if (res.status >= 400 || method === "GET" || method === "HEAD") {
          expect(unchanged, `store changed by refused raw ${method} ${target}`).toBe(true);
        }
      }),
      { seed: SEED, numRuns: runs(budget.socket), endOnFailure: true },
    );
  }, 300_000);

  it("events stream: generated Last-Event-ID and query over real sockets", async () => {
    const lastEventId = fc.oneof(
      fc.integer({ min: 0, max: 50 }).map(String),
      fc.constantFrom("", " 1 ", "-1", "1e3", "0x10", "9".repeat(20), "NaN", "1,2", "%00"),
      // Only what a header can carry: printable ASCII.
      nastyString.map((s) => [...s].filter((c) => c >= " " && c <= "~").join("")),
    );
    const generated = fc.record({
      lastEventId: fc.option(lastEventId, { nil: undefined }),
      query: queryString(world.hashes),
      key: fc.oneof({ weight: 5, arbitrary: fc.constant(world.key) }, fc.constantFrom("ps_nope", "")),
      method: fc.oneof({ weight: 5, arbitrary: fc.constant("GET") }, fc.constantFrom("POST", "HEAD", "DELETE")),
    });
    await fc.assert(
      fc.asyncProperty(generated, async ({ lastEventId, query, key, method }) => {
        const answer = await openStream(port, method, `/api/v2/events${query}`, [
          `x-api-key: ${key}`,
          ...(lastEventId === undefined ? [] : [`Last-Event-ID: ${lastEventId}`]),
        ]);
        count("/api/v2/events", answer.status);
        const request = { method, url: `/api/v2/events${query}` };
        if (answer.status === 200 && method === "GET") {
          expect(String(answer.headers["x-request-id"])).toMatch(UUID);
          // The opening: a replay of our project's events and `ready`, or `reset`; never theirs.
          expect(answer.body).toMatch(/event: (ready|reset)\n/);
          expect(answer.body).not.toContain("other-only");
          expect(answer.body).not.toContain(MARKER);
        } else {
          checkAnswer(request, answer);
        }
        expect((await dumpStore(t.store)) === baseline, "store changed by an events request").toBe(true);
      }),
      { seed: SEED, numRuns: runs(budget.events), endOnFailure: true },
    );
  }, 300_000);
});

/**
 * Writes a request on a real socket and reads until the server closes (every request says Connection: close)
 * or, for an event stream, until its opening (`ready` or `reset`) has arrived; then closes the connection.
 */
async function exchange(port: number, bytes: Buffer, isHead = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buffer = Buffer.alloc(0);
    let done = false;
    const timer = setTimeout(
      () => settle(new Error(`no answer within 5 s: ${buffer.toString().slice(0, 500)}`)),
      5_000,
    );
    const settle = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) return reject(error);
      let text = buffer.toString("latin1");
      // Interim answers (100 Continue) come first; the final one is what counts.
      while (/^HTTP\/1\.1 1\d\d /.test(text)) text = text.slice(text.indexOf("\r\n\r\n") + 4);
      if (isHead || /content-type: text\/event-stream/i.test(text)) {
        // No body to frame: the head, and whatever followed it as it came.
        const end = text.indexOf("\r\n\r\n");
        const headOnly = text
          .slice(0, end)
          .split("\r\n")
          .filter((l) => !/^(content-length|transfer-encoding):/i.test(l))
          .join("\r\n");
        const parsed = parseResponses(Buffer.from(`${headOnly}\r\ncontent-length: 0\r\n\r\n`, "latin1"), true);
        const last = parsed.at(-1);
        if (!last) return reject(new Error(`no answer: ${text.slice(0, 500)}`));
        return resolve({
          status: last.status,
          headers: last.headers,
          body: Buffer.from(text.slice(end + 4), "latin1").toString("utf8"),
        });
      }
      const last = parseResponses(buffer, true).at(-1);
      if (!last) return reject(new Error(`no complete answer before close: ${text.slice(0, 500)}`));
      resolve({ status: last.status, headers: last.headers, body: last.body });
    };
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      const text = buffer.toString("utf8");
      if (/content-type: text\/event-stream/i.test(text) && /event: (ready|reset)\n[\s\S]*?\n\n/.test(text)) settle();
    });
    socket.on("end", () => settle());
    socket.on("close", () => settle());
    socket.on("error", (error) => settle(error));
    socket.write(bytes);
  });
}

function openStream(port: number, method: string, path: string, lines: string[]): Promise<Answer> {
  const head = `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${lines.join("\r\n")}\r\nConnection: close\r\n\r\n`;
  return exchange(port, Buffer.from(head, "latin1"), method === "HEAD");
}
