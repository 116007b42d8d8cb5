/**
 * Findings of the outside fuzz run (issue 11) about answers: every answer the service can shape is in the
 * failure envelope with X-Request-Id, X-API-Version and Cache-Control: no-store, however broken the request
 * (checked over raw sockets against a real listening server, so nothing in between repairs the request or
 * hides what was written); odd Host headers on MCP; Cache-Control on MCP answers; tool and prompt names that
 * are Object.prototype properties.
 */
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, ERAS, toolData } from "../support/mcp.js";
import { head, type RawResponse, rawExchange, rawRequest } from "../support/raw-http.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The headers every shaped answer carries. */
function expectCommonHeaders(res: RawResponse, apiVersion = "2") {
  expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
  expect(res.headers["cache-control"]).toBe("no-store");
  expect(res.headers["x-api-version"]).toBe(apiVersion);
  expect(res.headers["x-request-id"]).toMatch(UUID);
  expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(res.body));
}

function expectFailure(res: RawResponse, status: number, error: string, apiVersion = "2") {
  expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({ status, body: { success: false, error } });
  expectCommonHeaders(res, apiVersion);
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

describe.each(DATABASES)("fuzz findings over raw sockets ($name)", (database) => {
  let t: TestApp;
  let port: number;
  beforeEach(async () => {
    t = await testApp(database);
    await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await t.close();
  });

  const get = (path: string, extra: string[] = []) =>
    rawRequest(port, head([`GET ${path} HTTP/1.1`, "Host: localhost", `x-api-key: ${t.key}`, ...extra]));

  describe("finding 2: MCP with an odd Host header", () => {
    it.each(["#", "[", "x:1:2", "a@b", "exa mple", "[::1", "%zz"])(
      "Host: %s gets a normal MCP answer",
      async (host) => {
        const res = await rawRequest(
          port,
          head(
            [
              "POST /api/v2/mcp HTTP/1.1",
              `Host: ${host}`,
              `x-api-key: ${t.key}`,
              "content-type: application/json",
              "accept: application/json, text/event-stream",
              `content-length: ${INITIALIZE.length}`,
            ],
            INITIALIZE,
          ),
        );
        expect(res.status).toBe(200);
        expect(res.headers["cache-control"]).toBe("no-store");
        expect(res.headers["x-api-version"]).toBe("2");
        expect(res.headers["x-request-id"]).toMatch(UUID);
        expect(res.body).toContain('"serverInfo":{"name":"promptstore"');
      },
    );

    it("a request target in absolute form gets a normal MCP answer too", async () => {
      const res = await rawRequest(
        port,
        head(
          [
            "POST http://a@b:1/api/v2/mcp?x=%zz HTTP/1.1",
            "Host: [",
            `x-api-key: ${t.key}`,
            "content-type: application/json",
            "accept: application/json, text/event-stream",
            `content-length: ${INITIALIZE.length}`,
          ],
          INITIALIZE,
        ),
      );
      expect(res.status).toBe(200);
      expect(res.body).toContain('"serverInfo":{"name":"promptstore"');
    });

    it("header values with obs-text bytes reach the SDK without a 500", async () => {
      const res = await rawRequest(
        port,
        Buffer.from(
          head(
            [
              "POST /api/v2/mcp HTTP/1.1",
              "Host: localhost",
              `x-api-key: ${t.key}`,
              "x-odd: caf\xe9 \xff\x80",
              "content-type: application/json",
              "accept: application/json, text/event-stream",
              `content-length: ${INITIALIZE.length}`,
            ],
            INITIALIZE,
          ),
          "latin1",
        ),
      );
      expect(res.status).toBe(200);
      expect(res.body).toContain('"serverInfo":{"name":"promptstore"');
    });

    it("REST ignores the Host header as before", async () => {
      const res = await rawRequest(port, head(["GET /api/v2/prompts HTTP/1.1", "Host: #", `x-api-key: ${t.key}`]));
      expect(res.status).toBe(200);
    });
  });

  describe("finding 4: answers shaped in the envelope", () => {
    it("broken %-encoding in the path is a 400 naming the URL", async () => {
      for (const path of ["/api/v2/prompts/%e0%80", "/api/v2/prompts/%ED%A0%80", "/api/v2/prompts/%zz/versions"]) {
        expectFailure(await get(path), 400, "url: is not valid percent-encoded UTF-8");
      }
      expectFailure(await get("/api/v1/prompts/%e0%80"), 400, "url: is not valid percent-encoded UTF-8", "1");
      expect((await get("/api/v1/prompts/%e0%80")).headers.deprecation).toBe("true");
      // A dashboard path gets the dashboard's security headers as well, as any of its answers does.
      const dashboard = await get("/api/dashboard/projects/%e0%80/prompts");
      expectFailure(dashboard, 400, "url: is not valid percent-encoded UTF-8");
      expect(dashboard.headers["content-security-policy"]).toContain("default-src 'self'");
    });

    it("an id over 1 024 characters is an unknown prompt (404), on every route that takes one", async () => {
      const id = "a".repeat(5_000);
      const expected = `prompt ${"a".repeat(64)} not found`;
      expectFailure(await get(`/api/v2/prompts/${id}`), 404, expected);
      expectFailure(await get(`/api/v2/prompts/${id}/versions`), 404, expected);
      expectFailure(await get(`/api/v1/prompts/${id}`), 404, expected, "1");
      const body = '{"markdown":"# A\\nb"}';
      for (const [method, path] of [
        ["PUT", `/api/v2/prompts/${id}`],
        ["POST", `/api/v2/prompts/${id}/publish`],
        ["DELETE", `/api/v2/prompts/${id}`],
      ] as const) {
        const res = await rawRequest(
          port,
          head(
            [
              `${method} ${path} HTTP/1.1`,
              "Host: localhost",
              `x-api-key: ${t.key}`,
              "content-type: application/json",
              `content-length: ${body.length}`,
            ],
            body,
          ),
        );
        expectFailure(res, 404, expected);
      }
    });

    it("a request head over 16 KiB is a 431 written on the socket, in the envelope", async () => {
      const res = await get("/api/v2/prompts", [`x-filler: ${"a".repeat(17_000)}`]);
      expectFailure(res, 431, "request head: must be at most 16384 bytes");
      expect(res.statusText).toBe("Request Header Fields Too Large");
      expect(res.headers.connection).toBe("close");
      expect(res.closed).toBe(true);
      // So is a path that alone is longer than that.
      expectFailure(
        await get(`/api/v2/prompts/${"a".repeat(17_000)}`),
        431,
        "request head: must be at most 16384 bytes",
      );
    });

    it("Expect other than 100-continue is a 417 in the envelope", async () => {
      const res = await get("/api/v2/prompts", ["Expect: foo", "x-request-id: trace-417"]);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 417,
        body: { success: false, error: "expect: only 100-continue is supported" },
      });
      expect(res.headers["x-request-id"]).toBe("trace-417");
      expect(res.headers["x-api-version"]).toBe("2");
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      const v1 = await get("/api/v1/prompts/x", ["Expect: foo"]);
      expectFailure(v1, 417, "expect: only 100-continue is supported", "1");
      expect(v1.headers.deprecation).toBe("true");
      // 100-continue itself still works.
      const body = JSON.stringify(promptBody(1));
      const created = await rawRequest(
        port,
        head(
          [
            "POST /api/v2/prompts HTTP/1.1",
            "Host: localhost",
            `x-api-key: ${t.key}`,
            "content-type: application/json",
            "Expect: 100-continue",
            `content-length: ${Buffer.byteLength(body)}`,
          ],
          body,
        ),
      );
      // The interim 100 comes first; the final answer is the create's.
      expect(created.interim).toEqual([100]);
      expect(created.status).toBe(201);
    });

    it("raw non-ASCII bytes in the path are a 400 in the envelope", async () => {
      const request = Buffer.concat([
        Buffer.from("GET /api/v2/prompts/"),
        Buffer.from([0xc3, 0xa9]),
        Buffer.from(` HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${t.key}\r\n\r\n`),
      ]);
      const res = await rawRequest(port, request);
      expectFailure(res, 400, "request: is not valid HTTP/1.1 (invalid request target)");
      expect(res.headers.connection).toBe("close");
    });

    it.each([
      [
        "two Content-Length values",
        ["Content-Length: 2", "Content-Length: 3"],
        "request: is not valid HTTP/1.1 (invalid content-length)",
      ],
      ["a negative Content-Length", ["Content-Length: -1"], "request: is not valid HTTP/1.1 (invalid content-length)"],
      [
        "a non-numeric Content-Length",
        ["Content-Length: 1x"],
        "request: is not valid HTTP/1.1 (invalid content-length)",
      ],
      [
        "Content-Length with Transfer-Encoding",
        ["Content-Length: 2", "Transfer-Encoding: chunked"],
        "request: is not valid HTTP/1.1 (invalid transfer-encoding)",
      ],
      [
        "an unknown Transfer-Encoding",
        ["Transfer-Encoding: gzip"],
        "request: is not valid HTTP/1.1 (invalid transfer-encoding)",
      ],
      ["a header line without a colon", ["just-a-name"], "request: is not valid HTTP/1.1 (invalid header)"],
    ])("%s is a 400 in the envelope", async (_name, lines, error) => {
      const res = await rawRequest(
        port,
        head(
          [
            "POST /api/v2/prompts HTTP/1.1",
            "Host: localhost",
            `x-api-key: ${t.key}`,
            "content-type: application/json",
            ...lines,
          ],
          "{}",
        ),
      );
      expectFailure(res, 400, error);
      expect(res.headers.connection).toBe("close");
    });

    it("a request line that is not HTTP is a 400 in the envelope", async () => {
      const res = await rawRequest(port, "HELLO\r\n\r\n");
      expectFailure(res, 400, "request: is not valid HTTP/1.1 (invalid method)");
      const version = await rawRequest(port, head(["GET /healthz HTTP/9.9", "Host: localhost"]));
      expectFailure(version, 400, "request: is not valid HTTP/1.1 (invalid HTTP version)");
    });

    it("CONNECT is a 405 in the envelope (Node would close without a word)", async () => {
      const res = await rawRequest(port, head(["CONNECT example.com:443 HTTP/1.1", "Host: example.com:443"]));
      expectFailure(res, 405, "method not allowed: CONNECT");
      expect(res.closed).toBe(true);
    });

    it("an HTTP/1.1 request without Host is a 400 in the envelope; HTTP/1.0 needs none", async () => {
      const res = await rawRequest(port, head(["GET /api/v2/prompts HTTP/1.1", `x-api-key: ${t.key}`]));
      expectFailure(res, 400, "host: required in HTTP/1.1");
      const old = await rawRequest(port, head(["GET /api/v2/prompts HTTP/1.0", `x-api-key: ${t.key}`]));
      expect(old.status).toBe(200);
    });

    it("a malformed request after one in flight on a kept-alive connection is answered after it", async () => {
      const { responses, closed } = await rawExchange(
        port,
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" +
          "GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n",
        2,
      );
      expect(responses.map((r) => r.status)).toEqual([200, 400]);
      expect(JSON.parse(responses[0]!.body)).toMatchObject({ success: true, data: { status: "ok" } });
      expect(JSON.parse(responses[1]!.body)).toEqual({
        success: false,
        error: "request: is not valid HTTP/1.1 (invalid content-length)",
      });
      expect(closed).toBe(true);
    });
  });

  describe("finding 5: MCP answers carry Cache-Control: no-store", () => {
    it.each(ERAS)("every answer of a whole session (%s), SSE and JSON alike", async (era) => {
      const seen: { status: number; type: string | null; cacheControl: string | null }[] = [];
      const recording: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        seen.push({
          status: res.status,
          type: res.headers.get("content-type"),
          cacheControl: res.headers.get("cache-control"),
        });
        return res;
      };
      const client = new Client(
        { name: "cache-check", version: "1" },
        era === "2025" ? {} : { versionNegotiation: { mode: { pin: era } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/api/v2/mcp`), {
          requestInit: { headers: { "x-api-key": t.key } },
          fetch: recording,
        }),
      );
      try {
        await client.listTools();
        await client.callTool({ name: "create_prompt", arguments: promptBody(1, { id: "p" }) });
        await client.callTool({ name: "get_prompt", arguments: { id: "p" } });
        await client.callTool({ name: "no_such_tool", arguments: {} }).catch(() => undefined);
        await client.getPrompt({ name: "p", arguments: { company: "A", language: "en" } });
      } finally {
        await client.close();
      }
      expect(seen.length).toBeGreaterThanOrEqual(5);
      expect(seen.some((s) => s.type?.startsWith("text/event-stream") || s.type?.startsWith("application/json"))).toBe(
        true,
      );
      for (const answer of seen) expect(answer.cacheControl, JSON.stringify(answer)).toBe("no-store");
    });

    it("a JSON-RPC error answer and a notification's 202 carry it too", async () => {
      const post = (body: string) =>
        rawRequest(
          port,
          head(
            [
              "POST /api/v2/mcp HTTP/1.1",
              "Host: localhost",
              `x-api-key: ${t.key}`,
              "content-type: application/json",
              "accept: application/json, text/event-stream",
              "mcp-protocol-version: 2025-06-18",
              `content-length: ${Buffer.byteLength(body)}`,
            ],
            body,
          ),
        );
      const notification = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      expect(notification.status).toBe(202);
      expect(notification.headers["cache-control"]).toBe("no-store");
      const invalid = await post('{"not":"jsonrpc"}');
      expect(invalid.status).toBe(400);
      expect(invalid.headers["cache-control"]).toBe("no-store");
    });
  });
});

describe.each(DATABASES)("finding 5: MCP names that are Object.prototype properties ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const clients: Client[] = [];
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
  });

  const PROTOTYPE_NAMES = ["toString", "__proto__", "constructor", "hasOwnProperty", "valueOf", "__defineGetter__"];

  it.each(ERAS)("tools/call of such a name is the unknown-tool error, as for any unknown name (%s)", async (era) => {
    const client = await connectMcp(url, t.key, era);
    clients.push(client);
    const outcome = async (name: string) => {
      try {
        const result = await client.callTool({ name, arguments: {} });
        return { result: toolData(result) };
      } catch (error) {
        const { code, message } = error as { code: number; message: string };
        return { code, message };
      }
    };
    const unknown = await outcome("no_such_tool");
    expect(unknown).toEqual({ code: -32602, message: "Tool no_such_tool not found" });
    for (const name of PROTOTYPE_NAMES) {
      expect(await outcome(name), name).toEqual({ code: -32602, message: `Tool ${name} not found` });
    }
    // The real tools still answer.
    expect(toolData(await client.callTool({ name: "list_prompts", arguments: {} })).data).toMatchObject({
      prompts: [],
    });
  });

  it.each(ERAS)("prompts/get of such a name is the unknown-prompt error (%s)", async (era) => {
    const client = await connectMcp(url, t.key, era);
    clients.push(client);
    for (const name of [...PROTOTYPE_NAMES, "no-such-prompt"]) {
      await expect(client.getPrompt({ name, arguments: {} }), name).rejects.toMatchObject({
        code: -32602,
        message: `prompt ${name} not found`,
      });
    }
    // A prompt whose id is a prototype name is served like any other.
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "constructor" }) });
    const got = await client.getPrompt({ name: "constructor", arguments: { company: "A", language: "en" } });
    expect(got.messages).toHaveLength(1);
  });
});

describe.each(DATABASES)("fuzz findings against the real binary ($name)", (database) => {
  const env = useBinaryDatabase(database);

  it("answers the parser's refusals, a bad URL, an odd Host on MCP and Expect in the envelope", async () => {
    env.server = await startServer(env.url);
    const key: string = env.server.events.find((e) => e.event === "bootstrap")?.key.key;
    const port = Number(new URL(env.server.url).port);

    expectFailure(
      await rawRequest(port, head(["GET /api/v2/prompts HTTP/1.1", "Host: localhost", `x-big: ${"a".repeat(17_000)}`])),
      431,
      "request head: must be at most 16384 bytes",
    );
    expectFailure(
      await rawRequest(port, head(["POST /api/v2/prompts HTTP/1.1", "Host: localhost", "Content-Length: -1"], "{}")),
      400,
      "request: is not valid HTTP/1.1 (invalid content-length)",
    );
    expectFailure(
      await rawRequest(port, head(["GET /api/v2/prompts/%e0%80 HTTP/1.1", "Host: localhost", `x-api-key: ${key}`])),
      400,
      "url: is not valid percent-encoded UTF-8",
    );
    expectFailure(
      await rawRequest(port, head(["GET /api/v2/prompts HTTP/1.1", "Host: localhost", "Expect: foo"])),
      417,
      "expect: only 100-continue is supported",
    );
    const mcp = await rawRequest(
      port,
      head(
        [
          "POST /api/v2/mcp HTTP/1.1",
          "Host: #",
          `x-api-key: ${key}`,
          "content-type: application/json",
          "accept: application/json, text/event-stream",
          `content-length: ${INITIALIZE.length}`,
        ],
        INITIALIZE,
      ),
    );
    expect(mcp.status).toBe(200);
    expect(mcp.headers["cache-control"]).toBe("no-store");
    // Nothing above was a failure of the service: no error in its log.
    expect(env.server.logs.filter((line) => line.level >= 50)).toEqual([]);
  });
});
