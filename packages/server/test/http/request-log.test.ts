import { describe, expect, it } from "vitest";
import { startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";
import { connectMcp } from "../support/mcp.js";
import { openEventStream } from "../support/sse.js";

/** Text that must never reach a log: it stands for what a user puts in a prompt. */
const CONTENT = "Confidential-launch-codename-ZEPHYR-7781";
const TITLE = "Secret-Section-Title-QX-4410";
const NEW_PASSWORD = "correct-horse-battery-9153";
const WRONG_PASSWORD = "not-my-password-6620-xyz";
const FORGED_KEY = "ps_live_forged0000000000000000000000000000";

describe.each(DATABASES)("the server's log ($name)", (database: TestDatabase) => {
  const env = useBinaryDatabase(database);

  it("has one JSON line per request with id, project, route, status and latency, and no secret or content", async () => {
    env.server = await startServer(env.url, { LOG_LEVEL: "info", PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const server = env.server;
    const bootstrap = server.events.find((e) => e.event === "bootstrap")!;
    const key: string = bootstrap.key.key;
    const projectId: string = bootstrap.project.id;
    const oneTimePassword: string = bootstrap.owner.password;
    const { url } = server;
    const api = (path: string, init: RequestInit & { key?: string } = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { "x-api-key": init.key ?? key, "content-type": "application/json", ...init.headers },
      });

    // REST with the key: create, read, save, publish, a v1 read, a bad key.
    const body = { id: "secret", name: "Secret", sections: [{ title: TITLE, content: CONTENT }] };
    expect((await api("/api/v2/prompts", { method: "POST", body: JSON.stringify(body) })).status).toBe(201);
    const read = await api("/api/v2/prompts/secret?version=latest");
    expect(read.status).toBe(200);
    expect(await read.text()).toContain(CONTENT);
    const requestId = read.headers.get("x-request-id");
    const saved = await api("/api/v2/prompts/secret", {
      method: "PUT",
      body: JSON.stringify({ sections: [{ title: TITLE, content: `${CONTENT} v2` }] }),
    });
    expect(saved.status).toBe(200);
    expect((await api("/api/v2/prompts/secret/publish", { method: "POST", body: "{}" })).status).toBe(200);
    expect((await api("/api/v1/prompts/secret")).status).toBe(200);
    expect((await api("/api/v2/prompts", { key: FORGED_KEY })).status).toBe(401);
    expect((await api("/api/v2/prompts", { headers: { authorization: `Bearer ${key}` }, key: "" })).status).toBe(401);

    // The events stream, opened and closed.
    const stream = await openEventStream(url, key);
    await stream.next((e) => e.event === "ready");
    stream.close();

    // MCP with the key: the SDK's client writes and reads the content.
    const client = await connectMcp(url, key, "2026-07-28");
    await client.callTool({
      name: "create_prompt",
      arguments: { id: "mcp-secret", name: "Mcp secret", markdown: `# ${TITLE}\n${CONTENT} by MCP` },
    });
    const got = await client.callTool({ name: "get_prompt", arguments: { id: "mcp-secret", version: "latest" } });
    expect(JSON.stringify(got)).toContain(CONTENT);
    await client.close();

    // The dashboard: a wrong password, sign-in, a session, a new password.
    const signIn = (password: string) =>
      fetch(`${url}/api/dashboard/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: bootstrap.owner.email, password }),
      });
    expect((await signIn(WRONG_PASSWORD)).status).toBe(401);
    const session = await signIn(oneTimePassword);
    expect(session.status).toBe(200);
    const cookie = (session.headers.get("set-cookie") ?? "").split(";")[0]!;
    const cookieValue = cookie.split("=")[1]!;
    expect(cookieValue.length).toBeGreaterThan(16);
    const csrf: string = ((await session.json()) as any).data.csrf_token;
    const changed = await fetch(`${url}/api/dashboard/password`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-csrf-token": csrf },
      body: JSON.stringify({ current_password: oneTimePassword, new_password: NEW_PASSWORD }),
    });
    expect(changed.status).toBe(200);
    const newCookie = (changed.headers.get("set-cookie") ?? "").split(";")[0]!;
    const listed = await fetch(`${url}/api/dashboard/projects/${projectId}/prompts`, {
      headers: { cookie: newCookie },
    });
    expect(listed.status).toBe(200);

    await server.stop("SIGTERM");
    // The first-start lines (bootstrap) show the key and the one-time password on purpose, once; the log is
    // everything else.
    const log = server
      .output()
      .split("\n")
      .filter((line) => !line.startsWith('{"event":"bootstrap"'))
      .join("\n");
    for (const secret of [
      key,
      key.slice(0, 20),
      FORGED_KEY,
      oneTimePassword,
      NEW_PASSWORD,
      WRONG_PASSWORD,
      cookieValue,
      newCookie.split("=")[1]!,
      csrf,
      CONTENT,
      TITLE,
    ]) {
      expect(log, `the log holds ${secret}`).not.toContain(secret);
    }

    const lines = log
      .split("\n")
      .filter((line) => line.startsWith("{") && !line.startsWith('{"event"'))
      .map((line) => JSON.parse(line));
    const completed = lines.filter((line) => line.msg === "request completed");
    expect(completed.length).toBeGreaterThanOrEqual(12);
    const readLine = completed.find((line) => line.reqId === requestId);
    expect(readLine).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: expect.any(Number),
      hostname: expect.any(String),
      reqId: requestId,
      method: "GET",
      path: "/api/v2/prompts/secret",
      route: "/api/v2/prompts/:id",
      status: 200,
      ms: expect.any(Number),
      project: projectId,
      msg: "request completed",
    });
    const refused = completed.filter((line) => line.status === 401 && line.route === "/api/v2/prompts");
    expect(refused).toHaveLength(2);
    expect(refused.map((line) => line.project)).toEqual([undefined, undefined]);
    expect(lines.find((line) => line.msg === "event stream ended")).toMatchObject({
      route: "/api/v2/events",
      project: projectId,
    });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 60_000);

  it("logs an MCP client's mistakes at warn, without a stack, never as server errors", async () => {
    env.server = await startServer(env.url, { LOG_LEVEL: "info", PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const server = env.server;
    const key: string = server.events.find((e) => e.event === "bootstrap")!.key.key;
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${server.url}/api/v2/mcp`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", ...headers },
        body,
      });
    const accept = { accept: "application/json, text/event-stream" };
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const answers = [
      // An unsupported protocol revision.
      await post({ ...accept, "mcp-protocol-version": "1999-01-01" }, list),
      // No Accept header naming JSON and SSE.
      await post({}, list),
      // Not JSON-RPC.
      await post(accept, JSON.stringify({ hello: "world" })),
      // A batch of garbage.
      await post(accept, JSON.stringify([1, 2, 3])),
      // A well-formed request of the current era that names a revision this server does not speak (the SDK
      // reported it as an error, with a stack).
      await post(
        { ...accept, "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" },
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/list",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2099-01-01",
              "io.modelcontextprotocol/clientCapabilities": {},
              "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
            },
          },
        }),
      ),
    ];
    expect(answers.map((res) => res.status)).toEqual([400, 406, 400, 400, 400]);
    await server.stop("SIGTERM");

    const lines = server
      .output()
      .split("\n")
      .filter((line) => line.startsWith('{"level"'))
      .map((line) => JSON.parse(line));
    const mistakes = lines.filter((line) => line.msg === "MCP client sent a request it should not have");
    expect(mistakes.map((line) => [line.level, line.status, line.reason])).toEqual([
      [40, 400, expect.stringMatching(/^Bad Request: Unsupported protocol version: 1999-01-01/)],
      [40, 406, "Not Acceptable: Client must accept both application/json and text/event-stream"],
      [40, 400, "Bad Request: the request body is not a valid JSON-RPC message"],
      [40, 400, "Bad Request: JSON-RPC batch contains an invalid message"],
      [40, 400, "Unsupported protocol version: 2099-01-01"],
    ]);
    for (const line of mistakes) {
      // The request id joins the warning to the request's own line.
      expect(line.reqId).toEqual(expect.any(String));
      expect(JSON.stringify(line)).not.toContain("stack");
      expect(line.err).toBeUndefined();
    }
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 60_000);

  it("warns at start when GET /metrics is open beyond this machine, and only then", async () => {
    // A server's lines are all in once it has stopped (pino writes asynchronously).
    const warnings = async (env_: Record<string, string>) => {
      env.server = await startServer(env.url, env_);
      await env.server.stop("SIGTERM");
      return env.server.logs.filter((line) => String(line.msg).startsWith("GET /metrics is open to anyone"));
    };
    expect(await warnings({ HOST: "0.0.0.0" })).toEqual([expect.objectContaining({ level: 40 })]);
    expect(await warnings({ HOST: "0.0.0.0", PROMPTSTORE_METRICS_TOKEN: "a-token-of-sixteen-chars" })).toEqual([]);
    expect(await warnings({ HOST: "127.0.0.1" })).toEqual([]);
  }, 60_000);
});
