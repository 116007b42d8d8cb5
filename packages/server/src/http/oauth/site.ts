import { getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/server";
import type { FastifyRequest } from "fastify";
import type { Site } from "../../service/oauth/authorization.js";
import { MCP_PATH } from "../routes/mcp.js";

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/**
 * The server's base URL: PROMPTSTORE_PUBLIC_URL when set, else the scheme and host the request came with
 * (behind a trusted proxy, the forwarded ones), as the rest of the server builds its links.
 */
export function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl;
  const given = `${request.protocol}://${request.host}`;
  try {
    // As URLs compare it: no default port.
    return new URL(given).origin;
  } catch {
    return given;
  }
}

/** The issuer (the base URL) and the MCP resource tokens are bound to (RFC 8707). */
export function siteOf(request: FastifyRequest, publicUrl: string | undefined): Site {
  const base = baseUrl(request, publicUrl);
  return { issuer: base, resource: `${base}${MCP_PATH}` };
}

/**
 * Where the MCP endpoint's protected resource metadata is (RFC 9728 3.1: the path form). A Host header no URL
 * can be made of (`x:1:2`) still gets an answer: the issuer as given, the well-known path after it.
 */
export function resourceMetadataUrl(site: Site): string {
  try {
    return getOAuthProtectedResourceMetadataUrl(new URL(site.resource));
  } catch {
    return `${site.issuer}${PROTECTED_RESOURCE_PATH}${MCP_PATH}`;
  }
}
