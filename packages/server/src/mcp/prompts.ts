import { type McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { AppError } from "@promptstore/core/errors";
import { PROMPT_ID_PATTERN } from "@promptstore/core/prompts/slug";
import { fillVariables } from "@promptstore/core/prompts/variables";
import type { Caller } from "../service/access.js";
import type { PromptService } from "../service/prompts/prompt-service.js";

/**
 * The prompts capability: every prompt of the key's project is an MCP prompt named by its id, its
 * variables are its arguments, and prompts/get serves production (else latest) with the guard and the
 * arguments filled in, as one message. Prompts change at run time, so the handlers read the project on
 * each call instead of registering a fixed list.
 */
export function registerPromptCapability(
  server: McpServer,
  service: PromptService,
  caller: Caller,
  report: (error: unknown) => void,
): void {
  server.server.setRequestHandler("prompts/list", async () => {
    const prompts = await service.listWithVariables(caller);
    return {
      prompts: prompts.map((p) => ({
        name: p.id,
        title: p.name,
        description: p.description,
        arguments: p.variables.map((name) => ({ name, description: `Value for {{ ${name} }}`, required: true })),
      })),
    };
  });

  server.server.setRequestHandler("prompts/get", async (request) => {
    const { name, arguments: args = {} } = request.params;
    const notFound = () => new ProtocolError(ProtocolErrorCode.InvalidParams, `prompt ${name} not found`);
    // A name no prompt id can have is not looked up: one with a NUL made PostgreSQL fail, and its error
    // went to the client as -32603 (found by test/resilience/fuzz-properties.test.ts).
    if (!PROMPT_ID_PATTERN.test(name)) throw notFound();
    let view: Awaited<ReturnType<PromptService["read"]>>;
    try {
      view = await service.read(caller, name, { guard: true });
    } catch (error) {
      if (error instanceof AppError && error.status === 404) throw notFound();
      // The SDK sends a thrown error's message to the client: a database's words stay in the log.
      report(error);
      throw new ProtocolError(ProtocolErrorCode.InternalError, "internal error; retry with backoff");
    }
    const missing = view.variables.filter((v) => !Object.hasOwn(args, v));
    if (missing.length > 0) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `missing arguments for prompt ${name}: ${missing.join(", ")}`,
      );
    }
    return {
      ...(view.description !== "" ? { description: view.description } : {}),
      messages: [{ role: "user" as const, content: { type: "text" as const, text: fillVariables(view.prompt, args) } }],
    };
  });
}
