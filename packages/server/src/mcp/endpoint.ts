import {
  type AuthInfo,
  createMcpHandler,
  InMemoryServerEventBus,
  type McpHttpHandler,
  type McpRequestContext,
  McpServer,
  UnsupportedProtocolVersionError,
} from "@modelcontextprotocol/server";
import type { Caller } from "../service/access.js";
import type { ChangeBus } from "../service/events/change-bus.js";
import type { PromptService } from "../service/prompts/prompt-service.js";
import { VERSION } from "../version.js";
import { type EvaluationTools, registerEvaluationTools } from "./evaluation-tools.js";
import { registerIncludeTools } from "./include-tools.js";
import { reportInvalidParamsAsClientErrors } from "./invalid-params.js";
import { registerPromptCapability } from "./prompts.js";
import { registerPromptTools } from "./tools.js";

const INSTRUCTIONS =
  "Promptstore keeps the project's system prompts as versioned, content-addressed sections. Use list_prompts and " +
  "get_prompt to read, create_prompt and save_prompt_version to write (the full content each time), publish_prompt " +
  "to release or roll back a version. Every prompt is also an MCP prompt whose arguments are its {{ variables }}. " +
  "To know whether a version is better, list_datasets, run_evaluation over one, then get_evaluation until it is done. " +
  "A section may include another prompt ({{> prompt-id}}), pinned when saved: list_includes and list_included_by show " +
  "the pins, update_includes saves a version with pins that follow their pointers again.";

/** The caller (the API key's project and scope) travels to the per-request server as the SDK's pass-through auth info. */
export function authInfoFor(caller: Caller): AuthInfo {
  return { token: "", clientId: caller.projectId, scopes: [], extra: { caller } };
}

/**
 * What the SDK reports through `onerror`: a client's own mistake (a body that is not JSON-RPC, a protocol
 * header it does not support, a protocol revision this server does not speak) is worth a warning, without a
 * stack; anything else is ours.
 */
export function isClientMistake(error: unknown): boolean {
  if (error instanceof UnsupportedProtocolVersionError) return true;
  return error instanceof Error && error.message.startsWith("Rejected inbound request");
}

/**
 * MCP handlers, one per project with MCP traffic: `notifications/prompts/list_changed` goes to the
 * `subscriptions/listen` streams of the project whose prompts changed, and only to them (one handler's
 * notifier reaches every stream it serves).
 */
export interface McpEndpoints {
  forProject(projectId: string): McpHttpHandler;
  /** How many listen streams are open, for the metrics. */
  listenStreams(): number;
  /** Ends listen streams (shutdown), so closing the server does not wait for them. */
  close(): Promise<void>;
}

/**
 * The SDK keeps registered tools (and prompts, resources) in plain objects and looks a requested name up
 * with `registry[name]`: `tools/call` of "toString", "constructor" or "__proto__" found Object.prototype's
 * members and answered "Tool toString disabled". Registries without a prototype make such names unknown,
 * answered like any other unknown name. Done before anything is registered (the registries are still empty);
 * if a release of the SDK renames them this does nothing, and test/resilience/fuzz-raw-http.test.ts says so.
 */
function withoutPrototypeLookups(server: McpServer): McpServer {
  const internals = server as unknown as Record<string, unknown>;
  for (const field of [
    "_registeredTools",
    "_registeredPrompts",
    "_registeredResources",
    "_registeredResourceTemplates",
  ]) {
    const registry = internals[field];
    if (registry !== null && typeof registry === "object" && Object.keys(registry).length === 0) {
      internals[field] = Object.create(null);
    }
  }
  return server;
}

/** Beyond this many handlers, those without an open listen stream are dropped (made again on use). */
const MAX_IDLE_HANDLERS = 500;

export function createMcpEndpoints(
  service: PromptService,
  changes: ChangeBus,
  report: (error: unknown) => void,
  evaluation?: EvaluationTools,
): McpEndpoints {
  reportInvalidParamsAsClientErrors();
  const handlers = new Map<string, { handler: McpHttpHandler; bus: InMemoryServerEventBus }>();
  const factory = (ctx: McpRequestContext) => {
    const caller = ctx.authInfo?.extra?.caller as Caller | undefined;
    // The HTTP layer authenticates before any MCP processing; a request without a caller is a wiring bug.
    if (!caller) throw new Error("MCP request reached the server without an authenticated caller");
    const server = withoutPrototypeLookups(
      new McpServer(
        { name: "promptstore", version: VERSION },
        // Tools never change; the prompt list does (a new prompt, new variables), and listeners are told.
        {
          capabilities: { prompts: { listChanged: true }, tools: { listChanged: false } },
          instructions: INSTRUCTIONS,
        },
      ),
    );
    registerPromptTools(server, service, caller, report);
    registerIncludeTools(server, service, caller, report);
    if (evaluation) registerEvaluationTools(server, evaluation, caller, report);
    registerPromptCapability(server, service, caller, report);
    return server;
  };
  // Any committed change of a prompt, on any instance, may change the list (names, arguments).
  const unsubscribe = changes.subscribe((change) => {
    if (change.kind === "prompt") handlers.get(change.projectId)?.handler.notify.promptsChanged();
  });
  const sweep = () => {
    if (handlers.size <= MAX_IDLE_HANDLERS) return;
    for (const [projectId, entry] of handlers) {
      if (entry.bus.listenerCount === 0) {
        handlers.delete(projectId);
        void entry.handler.close();
      }
    }
  };
  return {
    forProject(projectId) {
      let entry = handlers.get(projectId);
      if (!entry) {
        sweep();
        const bus = new InMemoryServerEventBus(report);
        entry = { handler: createMcpHandler(factory, { legacy: "stateless", onerror: report, bus }), bus };
        handlers.set(projectId, entry);
      }
      return entry.handler;
    },
    listenStreams() {
      let open = 0;
      for (const entry of handlers.values()) open += entry.bus.listenerCount;
      return open;
    },
    async close() {
      unsubscribe();
      await Promise.all([...handlers.values()].map((entry) => entry.handler.close()));
      handlers.clear();
    },
  };
}
