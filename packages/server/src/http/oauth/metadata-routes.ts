import type { OAuthMetadata, OAuthProtectedResourceMetadata } from "@modelcontextprotocol/server";
import { KEY_SCOPES } from "@promptstore/core/accounts/key-scopes";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { MCP_PATH } from "../routes/mcp.js";
import { PROTECTED_RESOURCE_PATH, siteOf } from "./site.js";

/** Discovery documents are read by browser-based clients too (the Inspector's web UI): any origin may. */
export function allowAnyOrigin(reply: FastifyReply): void {
  reply.header("access-control-allow-origin", "*");
  reply.header("access-control-allow-headers", "authorization, content-type, mcp-protocol-version");
  reply.header("access-control-allow-methods", "GET, POST, OPTIONS");
}

/**
 * RFC 9728 (the MCP endpoint as a protected resource) and RFC 8414 (this server as its own authorization
 * server). They are the standards' JSON documents, not the failure envelope's `data`: clients read them
 * as the standards define them.
 */
export function registerOAuthMetadataRoutes(app: FastifyInstance, publicUrl: string | undefined): void {
  const resource = (request: FastifyRequest, reply: FastifyReply): OAuthProtectedResourceMetadata => {
    allowAnyOrigin(reply);
    const site = siteOf(request, publicUrl);
    return {
      resource: site.resource,
      authorization_servers: [site.issuer],
      scopes_supported: [...KEY_SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "Promptstore",
    };
  };
  app.get(`${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, async (request, reply) => resource(request, reply));
  // Clients of the 2025-03-26 revision, and those that try the root first.
  app.get(PROTECTED_RESOURCE_PATH, async (request, reply) => resource(request, reply));

  app.get("/.well-known/oauth-authorization-server", async (request, reply) => {
    allowAnyOrigin(reply);
    const { issuer } = siteOf(request, publicUrl);
    const metadata: OAuthMetadata & Record<string, unknown> = {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      scopes_supported: [...KEY_SCOPES],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    };
    return metadata;
  });
}
