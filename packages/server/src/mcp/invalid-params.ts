import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";

type Handler = (request: unknown, ctx: unknown) => Promise<unknown>;

/** The SDK's validation message is a zod issue list as JSON; a client reads the first issue better. */
function describe(method: string, error: Error): string {
  try {
    const issues = JSON.parse(error.message) as { path?: (string | number)[]; message?: string }[];
    const first = issues[0];
    if (first?.message)
      return `Invalid params for ${method}: ${(first.path ?? []).join(".") || "request"}: ${first.message}`;
  } catch {
    // not the issue list: keep the SDK's words
  }
  return `Invalid params for ${method}: ${error.message}`;
}

let installed = false;

/**
 * A 2025-era request whose params have the wrong shape (`prompts/get` with `arguments: null` or a numeric
 * `name`, `prompts/list` or `tools/list` with a numeric `cursor`, `initialize` with a numeric
 * `protocolVersion`) fails the SDK's own schema check, which throws a plain Error, and the SDK answers that
 * as -32603 "internal error" with the zod issue list as its message: the client's mistake reported as the
 * server's fault (found by test/resilience/fuzz-properties.test.ts). The check runs synchronously, before any
 * handler; every handler, ours and the SDK's, is async and fails by rejecting. So a synchronous throw that is
 * not already a ProtocolError is the schema check, and becomes -32602 Invalid params.
 *
 * `_wrapHandler` is the hook the SDK documents for subclasses to wrap every registered request handler; the
 * McpServer constructs its Server itself, so the hook is wrapped on the class, once, before any is made.
 */
export function reportInvalidParamsAsClientErrors(): void {
  if (installed) return;
  installed = true;
  const proto = Server.prototype as unknown as { _wrapHandler?: (method: string, handler: Handler) => Handler };
  const original = proto._wrapHandler;
  if (typeof original !== "function") return;
  proto._wrapHandler = function (this: unknown, method: string, handler: Handler): Handler {
    const checked: Handler = (request, ctx) => {
      try {
        return handler(request, ctx);
      } catch (error) {
        if (error instanceof ProtocolError || !(error instanceof Error)) throw error;
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, describe(method, error));
      }
    };
    return original.call(this, method, checked);
  };
}
