import { randomBytes } from "node:crypto";
import { describeZodError } from "@promptstore/core/schemas";
import { z } from "zod";
import type { OAuthClient, OAuthClientStore } from "../../store/oauth/clients.js";
import { DocumentFetchError, type DocumentFetchOptions, fetchClientDocument } from "./document-fetch.js";
import { OAuthFailure, ShownFailure } from "./errors.js";
import { MAX_REDIRECT_URI_LENGTH, redirectUriProblem } from "./redirect-uris.js";

/** A fetched document is used this long before it is fetched again. */
export const DOCUMENT_CACHE_MS = 60 * 60 * 1000;
/** A document that could not be fetched is not asked for again this soon (a stranger cannot make us hammer a host). */
const FAILURE_CACHE_MS = 30 * 1000;

const redirectUri = z.string().superRefine((uri, ctx) => {
  const problem = redirectUriProblem(uri);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/**
 * What a client says of itself (RFC 7591 2, and a Client ID Metadata Document): what this server acts on
 * is checked, anything else is kept as sent. Public clients only: no secret is issued or accepted.
 */
const clientMetadata = z.looseObject({
  redirect_uris: z.array(redirectUri).min(1, "must name at least one redirect URI").max(20, "must name at most 20"),
  client_name: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
  token_endpoint_auth_method: z
    .enum(["none"], { error: "must be none: this server issues no client secrets (a public client with PKCE)" })
    .optional(),
  grant_types: z
    .array(z.string())
    .refine((types) => types.every((t) => t === "authorization_code" || t === "refresh_token"), {
      message: "may hold only authorization_code and refresh_token",
    })
    .optional(),
  response_types: z
    .array(z.string())
    .refine((types) => types.every((t) => t === "code"), { message: "may hold only code" })
    .optional(),
  client_uri: z.string().max(MAX_REDIRECT_URI_LENGTH).optional(),
  logo_uri: z.string().max(MAX_REDIRECT_URI_LENGTH).optional(),
  scope: z.string().max(200).optional(),
});

/** Registration asks for "none" by default; a client asking for a secret method is given "none" instead. */
const registration = clientMetadata.extend({
  token_endpoint_auth_method: z.string().max(100).optional(),
});

export const isUrlClientId = (clientId: string) => clientId.startsWith("https://");

export interface ClientRegistryOptions {
  fetch: DocumentFetchOptions;
}

/**
 * Who may ask for authorization: clients registered here (RFC 7591), and clients whose id is the https URL
 * of their metadata document, fetched (under the outbound address policy) and cached. A registration is
 * never a credential: it only names redirect URIs; tokens need a person's consent and the PKCE verifier.
 */
export class ClientRegistry {
  private readonly failures = new Map<string, { until: number; message: string }>();

  constructor(
    private readonly store: OAuthClientStore,
    private readonly options: ClientRegistryOptions,
  ) {}

  /** RFC 7591 registration; the answer is the client information the client keeps. */
  async register(body: unknown) {
    const parsed = registration.safeParse(body ?? {});
    if (!parsed.success) {
      const message = describeZodError(parsed.error, "body");
      const code = message.startsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata";
      throw new OAuthFailure(code, message);
    }
    const metadata = parsed.data;
    const id = `psc_${randomBytes(16).toString("hex")}`;
    const name = metadata.client_name ?? "Unnamed client";
    const stored = {
      ...metadata,
      client_name: name,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
    const client = await this.store.register({ id, name, redirectUris: metadata.redirect_uris, metadata: stored });
    return {
      ...stored,
      client_id: client.id,
      client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
    };
  }

  /**
   * The client a `client_id` names, for the authorization endpoint: refusals are shown to the person (the
   * redirect URI is not known to be good yet).
   */
  async forAuthorization(clientId: string): Promise<OAuthClient> {
    if (clientId.length > MAX_REDIRECT_URI_LENGTH) throw new ShownFailure("client_id: is too long");
    if (isUrlClientId(clientId)) return this.document(clientId);
    const client = await this.store.find(clientId);
    if (client?.kind !== "registered") {
      throw new ShownFailure("client_id: this client is not registered with this server; register it again");
    }
    return client;
  }

  /** The client at the token endpoint: a document's cached copy is enough there, its redirect URI was checked. */
  async known(clientId: string): Promise<OAuthClient | undefined> {
    if (clientId.length > MAX_REDIRECT_URI_LENGTH) return undefined;
    return this.store.find(clientId);
  }

  private async document(clientId: string): Promise<OAuthClient> {
    const cached = await this.store.find(clientId);
    if (cached?.kind === "document" && cached.expiresAt !== null && cached.expiresAt > new Date().toISOString()) {
      return cached;
    }
    const failed = this.failures.get(clientId);
    if (failed && failed.until > Date.now()) throw new ShownFailure(failed.message);
    try {
      const url = new URL(clientId);
      if (url.pathname === "/" || url.hash !== "" || url.username !== "" || url.password !== "") {
        throw new DocumentFetchError("its URL must be https, with a path, and no fragment or credentials");
      }
      const document = await fetchClientDocument(url, this.options.fetch);
      const parsed = clientMetadata.safeParse(document);
      if (!parsed.success)
        throw new DocumentFetchError(`it is not valid: ${describeZodError(parsed.error, "document")}`);
      const { client_id } = document as { client_id?: unknown };
      if (client_id !== clientId) throw new DocumentFetchError("it is not valid: its client_id is not its own URL");
      const name = parsed.data.client_name ?? url.host;
      const expires = new Date(Date.now() + DOCUMENT_CACHE_MS).toISOString();
      return await this.store.cacheDocument(
        { id: clientId, name, redirectUris: parsed.data.redirect_uris, metadata: parsed.data },
        expires,
      );
    } catch (error) {
      if (!(error instanceof DocumentFetchError) && !(error instanceof TypeError)) throw error;
      const message = `client_id: the client's metadata document was refused: ${error instanceof TypeError ? "its URL is not valid" : error.message}`;
      if (this.failures.size > 1000) this.failures.clear();
      this.failures.set(clientId, { until: Date.now() + FAILURE_CACHE_MS, message });
      throw new ShownFailure(message);
    }
  }
}
