/**
 * Fetching a Client ID Metadata Document: an outbound request whose URL a stranger chose. It follows the
 * webhook address policy (service/webhook-address.ts: every address the host resolves to is checked, and
 * the connection goes to a checked one), over https only, follows no redirect, reads at most
 * MAX_DOCUMENT_BYTES and gives up after DOCUMENT_TIMEOUT_MS, whatever the far end does.
 */
import https from "node:https";
import type { LookupFunction } from "node:net";
import { VERSION } from "../../version.js";
import { guardedLookup, RefusedAddressError, type Resolver } from "../webhook-address.js";

export const MAX_DOCUMENT_BYTES = 5 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5_000;

export interface DocumentFetchOptions {
  /** PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: the operator's one switch for outbound requests to private networks. */
  allowPrivate: boolean;
  resolver?: Resolver;
  /** Extra trust anchors (PEM), for a test's own https server; the system's otherwise. */
  ca?: string;
  timeoutMs?: number;
}

/** Why a document could not be had, as the refusal shows it (never the address a host resolves to). */
export class DocumentFetchError extends Error {}

export function fetchClientDocument(url: URL, options: DocumentFetchOptions): Promise<unknown> {
  if (url.protocol !== "https:") return Promise.reject(new DocumentFetchError("it must be an https URL"));
  const timeoutMs = options.timeoutMs ?? DOCUMENT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    const request = https.request(url, {
      method: "GET",
      headers: { accept: "application/json", "user-agent": `Promptstore/${VERSION}` },
      agent: false,
      lookup: guardedLookup(options.allowPrivate, options.resolver) as unknown as LookupFunction,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    const timer = setTimeout(
      () => finish(new DocumentFetchError(`no complete answer came within ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (error instanceof RefusedAddressError) {
        return finish(new DocumentFetchError("its host is at an address that is not allowed"));
      }
      finish(new DocumentFetchError(`it could not be reached (${error.code ?? "connection failed"})`));
    });
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      if (status !== 200) {
        const redirect = status >= 300 && status < 400 ? "; redirects are not followed" : "";
        return finish(new DocumentFetchError(`it answered HTTP ${status}${redirect}`));
      }
      const declared = Number(response.headers["content-length"] ?? 0);
      if (declared > MAX_DOCUMENT_BYTES) {
        return finish(new DocumentFetchError(`it is larger than ${MAX_DOCUMENT_BYTES} bytes`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_DOCUMENT_BYTES)
          return finish(new DocumentFetchError(`it is larger than ${MAX_DOCUMENT_BYTES} bytes`));
        chunks.push(chunk);
      });
      response.on("end", () => {
        try {
          finish(null, JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch {
          finish(new DocumentFetchError("it is not JSON"));
        }
      });
      response.on("error", () => finish(new DocumentFetchError("it ended before it was complete")));
    });
    request.end();
  });
}
