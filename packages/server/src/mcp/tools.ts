import type { CallToolResult, McpServer } from "@modelcontextprotocol/server";
import { AppError } from "@promptstore/core/errors";
import type { Caller } from "../service/access.js";
import type { PromptService } from "../service/prompts/prompt-service.js";
import { withRestMessages } from "./rest-messages.js";
import {
  createPromptInput,
  deletePromptInput,
  getPromptInput,
  listPromptsInput,
  listVersionsInput,
  publishInput,
  requestReleaseInput,
  saveVersionInput,
} from "./tool-inputs.js";

export type ErrorReporter = (error: unknown) => void;

/** Runs a tool body; the service's own errors come back as tool errors with their message, not as crashes. */
export async function toolResult(work: () => Promise<unknown>, report: ErrorReporter): Promise<CallToolResult> {
  try {
    const data = (await work()) as Record<string, unknown>;
    return { content: [{ type: "text", text: JSON.stringify(data, null, 2) }], structuredContent: data };
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      return { content: [{ type: "text", text: error.message }], isError: true };
    }
    report(error);
    return { content: [{ type: "text", text: "internal error; retry with backoff" }], isError: true };
  }
}

export const READ = { readOnlyHint: true, openWorldHint: false } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

/** The eight prompt tools, bound to the project of the request's key. Every call goes through the service. */
export function registerPromptTools(
  server: McpServer,
  service: PromptService,
  caller: Caller,
  report: ErrorReporter,
): void {
  server.registerTool(
    "list_prompts",
    {
      title: "List prompts",
      description: "Lists the project's prompts, oldest first, with their production and latest version hashes.",
      inputSchema: withRestMessages(listPromptsInput),
      annotations: READ,
    },
    (args) => toolResult(() => service.list(caller, args), report),
  );

  server.registerTool(
    "get_prompt",
    {
      title: "Get a prompt",
      description:
        "Reads a prompt: the assembled text (sections in XML-style tags, guard appended unless guard is false), sections, tools and variables. Serves production unless a version is given.",
      inputSchema: withRestMessages(getPromptInput),
      annotations: READ,
    },
    (args) =>
      toolResult(
        () => service.read(caller, args.id, { version: args.version, guard: args.guard, assign: args.assign }),
        report,
      ),
  );

  server.registerTool(
    "create_prompt",
    {
      title: "Create a prompt",
      description:
        "Creates a prompt with its first version. Give exactly one of `sections` ([{title, content}]) or `markdown` (every level-1 `# Heading` starts a section). The id is derived from the name unless given; a name whose id is taken gets a suffixed id (support-bot-2), so read `id` from the result. Optional tools in the chat-completions format; publish: true makes the first version production. Needs a key with scope write (publish: true needs publish).",
      inputSchema: withRestMessages(createPromptInput),
      annotations: WRITE,
    },
    (args) => toolResult(() => service.create(caller, args), report),
  );

  server.registerTool(
    "save_prompt_version",
    {
      title: "Save a prompt version",
      description:
        "Saves the full content of a prompt as a new version (sections or markdown; absent sections are dropped). Identical content creates nothing and returns the existing hash. Needs a key with scope write (publish: true needs publish).",
      inputSchema: withRestMessages(saveVersionInput),
      annotations: { ...WRITE, idempotentHint: true },
    },
    ({ id, ...body }) => toolResult(() => service.save(caller, id, body), report),
  );

  server.registerTool(
    "publish_prompt",
    {
      title: "Publish a prompt version",
      description:
        "Points production (or another label) at a version (latest by default): applications reading the prompt get it from their next read. Rolling back is publishing an older hash. With percent, starts or changes a gradual rollout of the version on the label. A protected label is refused: use request_release. Needs a key with scope publish.",
      inputSchema: withRestMessages(publishInput),
      // It replaces what production serves: destructive for the version it moves away from.
      annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    },
    (args) =>
      toolResult(
        () => service.publish(caller, args.id, args.version ?? "latest", { label: args.label, percent: args.percent }),
        report,
      ),
  );

  server.registerTool(
    "request_release",
    {
      title: "Request a release",
      description:
        "Asks for a protected label (such as production) to move to a version, optionally as a gradual rollout (percent). A person who did not ask approves it in the dashboard. Needs a key with scope publish.",
      inputSchema: withRestMessages(requestReleaseInput),
      annotations: { ...WRITE, idempotentHint: false },
    },
    (args) => {
      const { id, ...body } = args;
      return toolResult(() => service.requestRelease(caller, id, body), report);
    },
  );

  server.registerTool(
    "list_versions",
    {
      title: "List prompt versions",
      description: "Lists a prompt's versions, newest first, with their change notes and both pointers.",
      inputSchema: withRestMessages(listVersionsInput),
      annotations: READ,
    },
    (args) => toolResult(() => service.listVersions(caller, args.id), report),
  );

  server.registerTool(
    "delete_prompt",
    {
      title: "Delete a prompt",
      description:
        "Deletes a prompt with all its versions, for good: every read of it (production, latest, any version) is a 404 from then on, and applications reading it get nothing. Its id becomes free; a prompt created with it later starts with no history. Only when the user asked for this prompt to be deleted. Needs a key with scope publish.",
      inputSchema: withRestMessages(deletePromptInput),
      // Deleting twice is a 404 the second time: not idempotent in what it answers.
      annotations: { ...WRITE, destructiveHint: true, idempotentHint: false },
    },
    (args) => toolResult(() => service.delete(caller, args.id), report),
  );
}
