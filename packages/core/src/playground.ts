/**
 * The playground (docs/playground.md): model connections, runs, saved examples and their kept results.
 * The input schemas every surface shares and the shapes answered.
 */
import { z } from "zod";
import { type ModelSettings, modelOverride, modelSettings } from "./run-settings.js";
import {
  exactlyOneContentForm,
  includesInput,
  markdownInput,
  sectionsInput,
  toolsInput,
  versionRef,
} from "./schemas.js";
import { text } from "./text.js";
import { FULL_HASH } from "./version-ref.js";
import { webhookUrlProblem } from "./webhooks.js";

export const PLAYGROUND_LIMITS = {
  connectionsPerProject: 20,
  connectionNameLength: 100,
  apiKeyLength: 4000,
  modelsPerConnection: 100,
  modelNameLength: 200,
  messagesPerRun: 100,
  messageContentLength: 100_000,
  variableValueLength: 100_000,
  variablesPerRun: 200,
  examplesPerPrompt: 100,
  exampleNameLength: 200,
  goodAnswerLength: 10_000,
} as const;

export const CONNECTION_ID = /^con_[0-9a-f]{24}$/;
export const EXAMPLE_ID = /^exa_[0-9a-f]{24}$/;

const connectionName = text()
  .trim()
  .min(1, "must not be empty")
  .max(PLAYGROUND_LIMITS.connectionNameLength, `must be at most ${PLAYGROUND_LIMITS.connectionNameLength} characters`);

export const baseUrl = text()
  .superRefine((value, ctx) => {
    const problem = webhookUrlProblem(value);
    if (problem) return ctx.addIssue({ code: "custom", message: problem });
    const url = new URL(value);
    if (url.search !== "" || url.hash !== "")
      ctx.addIssue({ code: "custom", message: "must not have a query or fragment" });
  })
  .describe("An OpenAI-compatible API's base URL, e.g. https://api.openai.com/v1; /chat/completions is appended");

const apiKey = text().max(
  PLAYGROUND_LIMITS.apiKeyLength,
  `must be at most ${PLAYGROUND_LIMITS.apiKeyLength} characters`,
);

const modelNames = z
  .array(text().trim().min(1, "must not be empty").max(PLAYGROUND_LIMITS.modelNameLength))
  .max(PLAYGROUND_LIMITS.modelsPerConnection, `must hold at most ${PLAYGROUND_LIMITS.modelsPerConnection} models`);

export const createConnectionBody = z.strictObject({
  name: connectionName,
  base_url: baseUrl,
  api_key: apiKey.optional(),
  models: modelNames.optional(),
});

export const updateConnectionBody = createConnectionBody
  .partial()
  .refine((body) => Object.keys(body).length > 0, "must change at least one of name, base_url, api_key, models");

export type CreateConnectionBody = z.infer<typeof createConnectionBody>;
export type UpdateConnectionBody = z.infer<typeof updateConnectionBody>;

export interface ConnectionView {
  id: string;
  name: string;
  base_url: string;
  models: string[];
  /** Whether a key is kept: the key itself is never answered. */
  has_key: boolean;
  created_at: string;
  updated_at: string;
}

const content = text().max(
  PLAYGROUND_LIMITS.messageContentLength,
  `must be at most ${PLAYGROUND_LIMITS.messageContentLength} characters`,
);

export const toolCall = z.strictObject({
  id: text().min(1).max(200),
  type: z.literal("function"),
  function: z.strictObject({ name: text().min(1).max(64), arguments: text().max(100_000) }),
});

export const chatMessage = z.discriminatedUnion(
  "role",
  [
    z.strictObject({ role: z.literal("user"), content }),
    z.strictObject({
      role: z.literal("assistant"),
      content: content.nullable(),
      tool_calls: z.array(toolCall).max(128).optional(),
    }),
    z.strictObject({ role: z.literal("tool"), tool_call_id: text().min(1).max(200), content }),
  ],
  { error: 'must have role "user", "assistant" or "tool"' },
);
export type ChatMessage = z.infer<typeof chatMessage>;

export const chatMessages = z
  .array(chatMessage)
  .max(PLAYGROUND_LIMITS.messagesPerRun, `must hold at most ${PLAYGROUND_LIMITS.messagesPerRun} messages`);

export const variableValues = z
  .record(
    text().max(200),
    text().max(
      PLAYGROUND_LIMITS.variableValueLength,
      `must be at most ${PLAYGROUND_LIMITS.variableValueLength} characters`,
    ),
  )
  .refine((v) => Object.keys(v).length <= PLAYGROUND_LIMITS.variablesPerRun, "has too many variables");

export const draftContent = z
  .strictObject({
    sections: sectionsInput.optional(),
    markdown: markdownInput.optional(),
    tools: toolsInput.optional(),
    model: modelSettings.partial().optional(),
    /** Pins to keep, as a save takes them (docs/includes.md): `promptstore eval` sends the lockfile's. */
    includes: includesInput.optional(),
  })
  .superRefine(exactlyOneContentForm);
export type DraftContent = z.infer<typeof draftContent>;

export const connectionRef = text().regex(CONNECTION_ID, "must be a connection id (con_…)");

export const runBody = z
  .strictObject({
    connection: connectionRef,
    version: versionRef.optional(),
    draft: draftContent.optional(),
    variables: variableValues.optional(),
    messages: chatMessages.optional(),
    guard: z.boolean().optional(),
    model: modelOverride.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.version !== undefined && body.draft !== undefined) {
      ctx.addIssue({ code: "custom", path: ["draft"], message: "give version or draft, not both" });
    }
  });
export type RunBody = z.infer<typeof runBody>;

const exampleName = text()
  .trim()
  .min(1, "must not be empty")
  .max(PLAYGROUND_LIMITS.exampleNameLength, `must be at most ${PLAYGROUND_LIMITS.exampleNameLength} characters`);
const goodAnswer = text()
  .max(PLAYGROUND_LIMITS.goodAnswerLength, `must be at most ${PLAYGROUND_LIMITS.goodAnswerLength} characters`)
  .nullable();

export const createExampleBody = z.strictObject({
  name: exampleName,
  variables: variableValues.optional(),
  messages: chatMessages.optional(),
  good_answer: goodAnswer.optional(),
});
export const updateExampleBody = createExampleBody
  .partial()
  .refine((body) => Object.keys(body).length > 0, "must change at least one of name, variables, messages, good_answer");
export type CreateExampleBody = z.infer<typeof createExampleBody>;
export type UpdateExampleBody = z.infer<typeof updateExampleBody>;

export const runAllBody = z
  .strictObject({
    connection: connectionRef,
    versions: z.array(versionRef).max(2, "must name one or two versions"),
    /** An unsaved draft as one of the sides (the first): its results are kept under the hash it would save as. */
    draft: draftContent.optional(),
    model: modelOverride.optional(),
    guard: z.boolean().optional(),
    examples: z
      .array(text().regex(EXAMPLE_ID, "must be an example id (exa_…)"))
      .max(PLAYGROUND_LIMITS.examplesPerPrompt)
      .optional(),
    fresh: z.boolean().optional(),
  })
  .superRefine((body, ctx) => {
    const sides = body.versions.length + (body.draft === undefined ? 0 : 1);
    if (sides === 0) ctx.addIssue({ code: "custom", path: ["versions"], message: "must name one or two versions" });
    if (sides > 2) {
      ctx.addIssue({ code: "custom", path: ["versions"], message: "with a draft, must name at most one version" });
    }
  });
export type RunAllBody = z.infer<typeof runAllBody>;

export const resultsQuery = z.object({ version: versionRef });

export interface ExampleView {
  id: string;
  prompt_id: string;
  name: string;
  variables: Record<string, string>;
  messages: ChatMessage[];
  good_answer: string | null;
  created_at: string;
  updated_at: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: z.infer<typeof toolCall>[];
}

/** What a run's result is kept with: its settings hash is the sha256 of this, canonical. */
export interface RunSettings {
  connection: string;
  guard: boolean;
  model: Partial<ModelSettings>;
}

export interface ResultView {
  example_id: string;
  version: string;
  settings_hash: string;
  settings: RunSettings;
  answer: AssistantMessage;
  finish_reason: string | null;
  usage: Usage | null;
  timing: { ttft_ms: number | null; total_ms: number };
  ran_at: string;
  /** True when this server did not run it: it came in through an import, and never stands in for a run. */
  imported: boolean;
}

const hash = z.string().regex(FULL_HASH, "must be a 64-character hash");
const timestamp = z.iso.datetime();

export const exportedExample = z.strictObject({
  id: z.string().regex(EXAMPLE_ID, "must be an example id (exa_…)"),
  prompt_id: z.string().optional(),
  name: exampleName,
  variables: variableValues,
  messages: chatMessages,
  good_answer: goodAnswer,
  created_at: timestamp,
  updated_at: timestamp,
});

export const exportedResult = z.strictObject({
  example_id: z.string().regex(EXAMPLE_ID, "must be an example id (exa_…)"),
  version: hash,
  settings_hash: hash,
  settings: z.strictObject({ connection: z.string().max(40), guard: z.boolean(), model: modelSettings.partial() }),
  answer: z.strictObject({
    role: z.literal("assistant"),
    content: text().max(1_000_000).nullable(),
    tool_calls: z.array(toolCall).max(128).optional(),
  }),
  finish_reason: z.string().max(40).nullable(),
  usage: z
    .strictObject({
      prompt_tokens: z.number().int().min(0),
      completion_tokens: z.number().int().min(0),
      total_tokens: z.number().int().min(0),
    })
    .nullable(),
  timing: z.strictObject({ ttft_ms: z.number().int().min(0).nullable(), total_ms: z.number().int().min(0) }),
  ran_at: timestamp,
  imported: z
    .boolean()
    .optional()
    .describe(
      "True when the server did not run it (it was imported). Ignored on import: all that is imported is marked so",
    ),
});

export const importExamplesBody = z.strictObject({
  examples: z.array(exportedExample).max(PLAYGROUND_LIMITS.examplesPerPrompt),
  results: z.array(exportedResult).max(10_000).default([]),
});
export type ImportExamplesBody = z.infer<typeof importExamplesBody>;
