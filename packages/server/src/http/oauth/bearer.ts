import { AppError } from "@promptstore/core/errors";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type TokenAccess, TokenRefused } from "../../service/oauth/token-access.js";
import { resourceMetadataUrl, siteOf } from "./site.js";

/** The Bearer token of a request's Authorization header, or undefined when it carries none. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== "string" || !/^bearer /i.test(header)) return undefined;
  return header.slice(7).trim();
}

const quoted = (text: string) => text.replace(/["\\]/g, "'");

/**
 * The MCP endpoint as an OAuth protected resource: a refusal for a missing or invalid credential is a 401
 * whose WWW-Authenticate points at the resource metadata (RFC 9728 5.1), with `error="invalid_token"` when a
 * token was sent (RFC 6750 3.1); a bearer token is resolved to the person's caller.
 */
export function mcpBearer(tokens: TokenAccess, publicUrl: string | undefined) {
  return {
    /** Adds the challenge to a 401 about to be sent. */
    challenge(request: FastifyRequest, reply: FastifyReply, invalidToken?: string): void {
      const site = siteOf(request, publicUrl);
      const parts = [`resource_metadata="${resourceMetadataUrl(site)}"`];
      if (invalidToken !== undefined) {
        parts.push('error="invalid_token"', `error_description="${quoted(invalidToken)}"`);
      }
      reply.header("www-authenticate", `Bearer ${parts.join(", ")}`);
    },
    async authenticate(request: FastifyRequest, reply: FastifyReply, token: string): Promise<void> {
      try {
        request.caller = await tokens.callerOf(token, siteOf(request, publicUrl).resource);
      } catch (error) {
        if (!(error instanceof TokenRefused)) throw error;
        this.challenge(request, reply, error.message);
        throw new AppError("unauthorized", error.message);
      }
    },
  };
}

export type McpBearer = ReturnType<typeof mcpBearer>;
