import type { McpServer } from "@modelcontextprotocol/server";
import type { Caller } from "../service/access.js";
import type { PromptService } from "../service/prompts/prompt-service.js";
import { withRestMessages } from "./rest-messages.js";
import { listIncludedByInput, listIncludesInput, updateIncludesInput } from "./tool-inputs.js";
import { type ErrorReporter, READ, toolResult, WRITE } from "./tools.js";

/**
 * The include tools (docs/includes.md, docs/mcp.md), bound to the project of the request's key: what a prompt
 * includes, what includes it, and the update of its pins, through the same service as REST.
 */
export function registerIncludeTools(
  server: McpServer,
  service: PromptService,
  caller: Caller,
  report: ErrorReporter,
): void {
  server.registerTool(
    "list_includes",
    {
      title: "List a prompt's includes",
      description:
        "Lists what a version of a prompt includes ({{> prompt-id}} in its sections): each include with the version it is pinned to, what its pointer (production, latest, a label) names now, and whether it is outdated. Production unless a version is given.",
      inputSchema: withRestMessages(listIncludesInput),
      annotations: READ,
    },
    (args) => toolResult(() => service.includes.includes(caller, args.id, args.version), report),
  );

  server.registerTool(
    "list_included_by",
    {
      title: "List what includes a prompt",
      description:
        "Lists the versions of other prompts that include this one: for each, the labels that serve it, the version of this prompt it is pinned to, and whether that pin is outdated.",
      inputSchema: withRestMessages(listIncludedByInput),
      annotations: READ,
    },
    (args) => toolResult(() => service.includes.includedBy(caller, args.id), report),
  );

  server.registerTool(
    "update_includes",
    {
      title: "Update a prompt's includes",
      description:
        "Saves a new version of a prompt with its includes pinned to what their pointers name now (all of them, or those of the prompts in `only`), starting from the version the label (production by default) serves. Nothing is published unless publish is true; then a protected label gets a release request instead, and a label whose required evaluation the new version has not passed stays where it is (outcome blocked, with how to run it). Needs a key with scope write (publish: true needs publish).",
      inputSchema: withRestMessages(updateIncludesInput),
      annotations: { ...WRITE, idempotentHint: true },
    },
    ({ id, ...body }) => toolResult(() => service.includes.update(caller, id, body), report),
  );
}
