import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

export const MCP_TOOLS = [
  "create_prompt",
  "delete_prompt",
  "get_evaluation",
  "get_prompt",
  "list_datasets",
  "list_included_by",
  "list_includes",
  "list_prompts",
  "list_versions",
  "publish_prompt",
  "request_release",
  "run_evaluation",
  "save_prompt_version",
  "update_includes",
];

export type Era = "2025" | "2026-07-28";
export const ERAS: Era[] = ["2025", "2026-07-28"];

/** The SDK's own client over real HTTP: 2025 era opens with `initialize`, the current era pins its revision. */
export async function connectMcp(baseUrl: string, key: string, era: Era): Promise<Client> {
  const client = new Client(
    { name: "promptstore-test", version: "1.0.0" },
    era === "2025" ? {} : { versionNegotiation: { mode: { pin: era } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/v2/mcp`), {
      requestInit: { headers: { "x-api-key": key } },
    }),
  );
  return client;
}

/** The JSON a tool returned, or its error text. */
export function toolData(result: { content?: unknown; isError?: boolean }): { error?: string; data?: any } {
  const content = result.content as { type: string; text: string }[];
  const text = content[0]?.text ?? "";
  return result.isError ? { error: text } : { data: JSON.parse(text) };
}
