import { localhostAllowedOrigins, validateOriginHeader } from "@modelcontextprotocol/server";
import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { authInfoFor, type McpEndpoints } from "../../mcp/endpoint.js";
import { scopeOf } from "../auth.js";

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
 * POST carries every MCP message; the key was checked and counted before the body was read. GET and
 * DELETE (2025 session operations) get the generic 405, since the server keeps no sessions.
 */
export function registerMcpRoute(app: FastifyInstance, endpoints: McpEndpoints): void {
  app.post(MCP_PATH, { config: { auth: true, mcp: true } }, async (request, reply) => {
    const scope = scopeOf(request);
    const url = `${request.protocol}://${request.headers.host ?? "localhost"}${request.url}`;
    const response = await endpoints
      .forProject(scope.projectId)
      .fetch(new Request(url, { method: "POST", headers: webHeaders(request) }), {
        parsedBody: request.body,
        authInfo: authInfoFor(scope),
      });
    return reply.send(response);
  });
}
