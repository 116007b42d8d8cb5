/** OAuth error codes this server answers with (RFC 6749 5.2, RFC 7591 3.2.2, RFC 8707 2). */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_target"
  | "invalid_client_metadata"
  | "invalid_redirect_uri"
  | "access_denied"
  | "invalid_token";

/**
 * A refusal of the OAuth endpoints, answered in the shape OAuth clients read (`error`, `error_description`);
 * the description names the field, as every refusal of the server does.
 */
export class OAuthFailure extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = error === "invalid_client" ? 401 : 400,
  ) {
    super(description);
    this.name = "OAuthFailure";
  }
}

/**
 * A refusal of the authorization endpoint before its client and redirect URI are known to be good: shown to
 * the person as a page, never sent to the redirect URI (which could be anyone's: no open redirect).
 */
export class ShownFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShownFailure";
  }
}
