import type { TestApp } from "./app.js";
import type { StandIn } from "./openai-stand-in.js";

/** One Server-Sent Event of a run, its data parsed. */
export interface RunEvent {
  event: string;
  data: any;
}

/** Parses a whole SSE body (`event:` / `data:` blocks) as the playground writes it. */
export function parseEvents(body: string): RunEvent[] {
  return body
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "";
      const data = lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "null";
      return { event, data: JSON.parse(data) };
    });
}

/** A connection of the test project to the stand-in, made as the operator (the CLI's power). */
export async function standInConnection(t: TestApp, standIn: StandIn, apiKey = standIn.apiKey): Promise<string> {
  const view = await t.app.connections.create(
    { projectId: t.project.projectId, operator: true },
    { name: "Stand-in", base_url: standIn.baseUrl, api_key: apiKey, models: ["stand-in-model"] },
  );
  return view.id;
}

/** A prompt with a variable and a tool; returns its id and first version's hash. */
export async function toolPrompt(t: TestApp, id = "support", key?: string): Promise<{ id: string; version: string }> {
  const res = await t.request("POST", "/api/v2/prompts", {
    ...(key !== undefined ? { key } : {}),
    body: {
      id,
      name: "Support",
      sections: [{ title: "Role", content: "You help {{ customer }}." }],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "The weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
      publish: true,
    },
  });
  if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
  return { id, version: res.body.data.version };
}

/** A run through inject(): the status, and the events when it streamed (the envelope otherwise). */
export async function run(t: TestApp, promptId: string, body: unknown, key?: string | null) {
  const res = await t.request("POST", `/api/v2/prompts/${promptId}/run`, {
    body,
    ...(key !== undefined ? { key } : {}),
  });
  const streamed = String(res.headers["content-type"] ?? "").startsWith("text/event-stream");
  return {
    status: res.status,
    headers: res.headers,
    events: streamed ? parseEvents(String(res.body)) : [],
    body: streamed ? undefined : res.body,
  };
}
