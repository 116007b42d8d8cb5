import { type AuthInfo, createMcpHandler, type McpHttpHandler, McpServer } from "@modelcontextprotocol/server";
import type { PromptService, Scope } from "../service/prompt-service.js";
import { VERSION } from "../version.js";
import { registerPromptCapability } from "./prompts.js";
import { registerPromptTools } from "./tools.js";

const INSTRUCTIONS =
  "Promptstore keeps the project's system prompts as versioned, content-addressed sections. Use list_prompts and " +
  "get_prompt to read, create_prompt and save_prompt_version to write (the full content each time), publish_prompt " +
  "to release or roll back a version. Every prompt is also an MCP prompt whose arguments are its {{ variables }}.";

/** The API key's scope travels to the per-request server as the SDK's pass-through auth info. */
export function authInfoFor(scope: Scope): AuthInfo {
  return { token: "", clientId: scope.projectId, scopes: [], extra: { scope } };
}

/**
 * The MCP endpoint: stateless, a fresh server per request bound to the key's project, serving both the
 * 2026-07-28 revision and 2025 clients that open with `initialize`.
 */
/**
 * What the SDK reports through `onerror`: a client's own mistake (a body that is not JSON-RPC, a protocol
 * header it does not support) is worth a warning, without a stack; anything else is ours.
 */
export function isClientMistake(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("Rejected inbound request");
}

export function createMcpEndpoint(service: PromptService, report: (error: unknown) => void): McpHttpHandler {
  return createMcpHandler(
    (ctx) => {
      const scope = ctx.authInfo?.extra?.scope as Scope | undefined;
      // The HTTP layer authenticates before any MCP processing; a request without a scope is a wiring bug.
      if (!scope) throw new Error("MCP request reached the server without an authenticated scope");
      const server = new McpServer(
        { name: "promptstore", version: VERSION },
        // The SDK would claim listChanged for both; tools never change, and no prompt notifications are
        // sent yet, so neither is claimed.
        {
          capabilities: { prompts: { listChanged: false }, tools: { listChanged: false } },
          instructions: INSTRUCTIONS,
        },
      );
      registerPromptTools(server, service, scope, report);
      registerPromptCapability(server, service, scope);
      return server;
    },
    { legacy: "stateless", onerror: report },
  );
}
