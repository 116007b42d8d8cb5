import type { IncomingMessage, ServerResponse } from "node:http";
import helmet from "helmet";

/**
 * One policy for the dashboard: its HTML may load only its own scripts, styles and data, and nothing may
 * frame it. No 'unsafe-inline' anywhere.
 */
const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/**
 * Helmet's headers, computed once at start-up: they do not depend on the request, and a per-request
 * middleware (as @fastify/helmet adds to every route, the API's hot read path included) would cost on
 * every call what is the same every time.
 */
function helmetHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string) {
      headers[name.toLowerCase()] = value;
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    // Self-hosted servers are often reached over plain HTTP by address; HSTS is the TLS proxy's to set.
    strictTransportSecurity: false,
  })({} as IncomingMessage, response as unknown as ServerResponse, () => {});
  return headers;
}

/** The security headers of every dashboard response (its files and its API). */
export const DASHBOARD_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze(helmetHeaders());

/**
 * The part of those headers that matters for JSON read by programs, set on every API answer (MCP, events and
 * failures included): no content sniffing, and no Referer leaked onward from anything a browser opens.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": DASHBOARD_SECURITY_HEADERS["x-content-type-options"] as string,
  "referrer-policy": DASHBOARD_SECURITY_HEADERS["referrer-policy"] as string,
});
