import { localhostAllowedOrigins, validateOriginHeader } from "@modelcontextprotocol/server";
import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { authInfoFor, type McpEndpoints } from "../../mcp/endpoint.js";
import { callerOf } from "../guards/auth.js";
import { keepStreamOpen } from "../guards/connection-limits.js";
import { markStream } from "../telemetry/metrics.js";

export const MCP_PATH = "/api/v2/mcp";

/**
 * Refuses a request whose Origin header is present and not allowed (DNS rebinding protection, as the
 * Streamable HTTP transport asks). Desktop and IDE clients send no Origin and pass.
 */
export function mcpOriginCheck(allowedHostnames: string[] | undefined) {
  const allowed = allowedHostnames ?? localhostAllowedOrigins();
  return (request: FastifyRequest): void => {
    const result = validateOriginHeader(request.headers.origin, allowed);
    if (!result.ok) throw new AppError("forbidden", `origin: ${result.message}`);
  };
}

function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : String(value));
  }
  return headers;
}

/**
 * The URL of the web Request handed to the SDK, the same for every request. The handler does not use it (the
 * server is stateless and routes nothing by URL), while the caller's Host header may be anything Node lets
 * through (`#`, `[`, `a@b`) and the request target may be in absolute form: a URL built from them made
 * `new Request` throw a TypeError, answered 500.
 */
const REQUEST_URL = `http://localhost${MCP_PATH}`;

/**
 * Every answer carries `Cache-Control: no-store` (the contract, section 9); the SDK marks its event streams
 * `no-cache, no-transform`. `no-store` also keeps an SSE stream out of every cache; the SDK's
 * `X-Accel-Buffering: no` stays, which is what keeps proxies (nginx) from holding events back.
 */
function withNoStore(response: Response): Response {
  try {
    response.headers.set("cache-control", "no-store");
    return response;
  } catch {
    // Immutable headers (Response.error(), a fetched Response): copy them.
    const headers = new Headers(response.headers);
    headers.set("cache-control", "no-store");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

/**
 * What the SDK said when it refused a request (an unsupported protocol revision, a missing Accept, a body that
 * is not JSON-RPC): its JSON-RPC error message, cut short, for the warning. The client's mistake, not ours:
 * logged at warn without a stack, so a misbehaving client cannot make the server look broken.
 */
async function refusalReason(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { error?: { message?: unknown } };
    return typeof body.error?.message === "string" ? body.error.message.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST carries every MCP message; the key was checked and counted before the body was read. GET and
 * DELETE (2025 session operations) get the generic 405, since the server keeps no sessions.
 */
export function registerMcpRoute(app: FastifyInstance, endpoints: McpEndpoints): void {
  app.post(MCP_PATH, { config: { auth: true, mcp: true } }, async (request, reply) => {
    const caller = callerOf(request);
    const response = await endpoints
      .forProject(caller.projectId)
      .fetch(new Request(REQUEST_URL, { method: "POST", headers: webHeaders(request) }), {
        parsedBody: request.body,
        authInfo: authInfoFor(caller),
      });
    if (response.status >= 400 && response.status < 500) {
      request.log.warn(
        { status: response.status, reason: await refusalReason(response) },
        "MCP client sent a request it should not have",
      );
    }
    // A listen stream (or a long tool call's progress) stays open between the SDK's keep-alive comments.
    if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
      keepStreamOpen(request.raw.socket);
      markStream(request.raw);
    }
    return reply.send(withNoStore(response));
  });
}
