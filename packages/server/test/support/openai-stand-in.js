/**
 * The one stand-in of the playground's tests and its bench (packages/server/bench/playground.js): a real HTTP server speaking OpenAI's chat-completions protocol
 * (POST /chat/completions), so everything of ours (connections, the outbound call, the SSE relay) runs for
 * real. Where each behaviour comes from:
 *
 * - [chunk] The streamed chunk object, `{ id, object: "chat.completion.chunk", created, model, choices: [{
 *   index, delta, finish_reason }] }`, the same id and `created` on every chunk, `finish_reason` only on the
 *   last choice chunk: OpenAI's ChatCompletionChunk as its SDKs generate it from the OpenAPI spec, e.g.
 *   "Interface ChatCompletionChunk" (https://elsoul.github.io/skeet-ai/interfaces/ChatCompletionChunk-1.html)
 *   and openai-interface's `streaming::ChatCompletionChunk`
 *   (https://docs.rs/crate/openai-interface/0.11.0/source/src/chat/create/response.rs).
 * - [sse] Each chunk is a `data: <json>\n\n` server-sent event and the stream ends with `data: [DONE]`: "OpenAI
 *   Streaming Chat Completions" (https://www.skills.sh/mhbzhy-lost/claude-personal-config/openai-streaming)
 *   and the stream_options note below, which names the `data: [DONE]` message.
 * - [usage] With `stream_options: { include_usage: true }` "an additional chunk will be streamed before the
 *   data: [DONE] message. The usage field on this chunk shows the token usage statistics for the entire
 *   request, and the choices field will always be an empty array. All other chunks will also include a usage
 *   field, but with a null value." OpenAI's ChatCompletionStreamOptions, openai-ruby
 *   (https://rubydoc.info/github/openai/openai-ruby/OpenAI/Models/Chat/ChatCompletionStreamOptions) and the
 *   OpenAPI spec quoted in openai-struct
 *   (https://docs.rs/openai-struct/latest/i686-pc-windows-msvc/src/openai_struct/models/chat_completion_stream_options.rs.html).
 *   Without the option no usage chunk is sent ("Send the OpenAI usage chunk when the request asks",
 *   https://gitlab.com/gitlab-com/public-sector/gitlab-simulation/-/merge_requests/29).
 * - [tools] A tool call streams as `delta.tool_calls: [{ index, id?, type?, function: { name?, arguments } }]`:
 *   `index` always, `id`, `type: "function"` and the name on its first piece, the arguments string in pieces
 *   after; the last chunk's `finish_reason` is `"tool_calls"`. ChoiceDeltaToolCall in the Stainless-generated
 *   SDKs (dedalus-labs/dedalus-sdk-python src/dedalus_labs/types/chat/choice_delta_tool_call.py;
 *   aallam/openai-kotlin ToolCallChunk.kt: "Tool call index. Required in the case of chat stream variant").
 * - [errors] Failures are JSON `{ "error": { "message", "type", "param", "code" } }` with the status:
 *   401 `invalid_request_error`/`invalid_api_key` "Incorrect API key provided: …"
 *   (https://github.com/chatanywhere/GPT_API_free/issues/62, the body quoted as the API sent it);
 *   404 `invalid_request_error`/`model_not_found` "The model `…` does not exist or you do not have access to
 *   it." (https://github.com/openai/openai-agents-python/issues/458); 429 `rate_limit_exceeded`, "Rate limit
 *   reached for requests" (https://github.com/memochou1993/gpt-ai-assistant/issues/313; error-code tables such
 *   as https://docs.llmhub.t-systems.net/reference/error-codes and http://47.236.198.239/en/docs/errors list
 *   the same statuses and codes).
 * - [auth] The key is sent as `Authorization: Bearer <key>` (the same error-code pages: "Verify your
 *   Authorization: Bearer header").
 *
 * What tests can ask of it, per request by the model name (so two runs in one test behave differently):
 * a script of pieces with delays, a broken stream (the socket destroyed midway, no [DONE]), a hang (headers
 * never sent, for timeouts), an error status; and it counts open connections and remembers every request.
 */
import { createServer } from "node:http";

const CREATED = 1_764_000_000;

function errorBody(status, model, message) {
  switch (status) {
    case 401:
      return {
        message:
          message ??
          "Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      };
    case 404:
      return {
        message: message ?? `The model \`${model}\` does not exist or you do not have access to it.`,
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      };
    case 429:
      return {
        message:
          message ??
          `Rate limit reached for ${model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.`,
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      };
    case 400:
      return { message: message ?? "Invalid request", type: "invalid_request_error", param: null, code: null };
    default:
      return {
        message: message ?? "The server had an error while processing your request.",
        type: "server_error",
        param: null,
        code: null,
      };
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Hostile providers: answers that never end. Each writes until the client goes (its socket closes), waiting
 * for the socket to drain, so the stand-in's own memory stays flat however fast the client reads.
 * - `endless`: content deltas of `deltaBytes` characters (default 16), one after another, never `[DONE]`.
 * - `no_newlines`: one `data:` line that never ends: a JSON string opened and filled with `x` forever.
 * - `drip`: a comment line (`: keep-alive`) every `intervalMs`, and nothing else, forever.
 */
const HOSTILE = new Set(["endless", "no_newlines", "drip"]);

async function hostile(behaviour, response, model) {
  response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  let closed = false;
  response.on("close", () => {
    closed = true;
  });
  const write = async (text) => {
    if (closed || response.destroyed) return false;
    if (!response.write(text)) {
      // Whichever comes first takes the other listener away: a long stream waits here thousands of times.
      await new Promise((resolve) => {
        const done = () => {
          response.off("drain", done);
          response.off("close", done);
          resolve();
        };
        response.once("drain", done);
        response.once("close", done);
      });
    }
    return !closed && !response.destroyed;
  };
  if (behaviour.kind === "endless") {
    const piece = "x".repeat(behaviour.deltaBytes ?? 16);
    const frame = `data: ${JSON.stringify({
      id: "chatcmpl-endless",
      object: "chat.completion.chunk",
      created: CREATED,
      model,
      choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
    })}\n\n`;
    let sent = 0;
    while (await write(frame)) {
      // Let the event loop breathe now and then, so a test's other work runs beside the flood.
      if (++sent % 64 === 0) await sleep(behaviour.delayMs ?? 0);
    }
  } else if (behaviour.kind === "no_newlines") {
    const block = "x".repeat(64 * 1024);
    if (!(await write('data: {"choices":[{"index":0,"delta":{"content":"'))) return;
    while (await write(block)) await sleep(behaviour.delayMs ?? 0);
  } else {
    while (await write(": keep-alive\n\n")) await sleep(behaviour.intervalMs ?? 500);
  }
}

/** @type {typeof import("./openai-stand-in.d.ts").startStandIn} */
export async function startStandIn(apiKey = "sk-test-stand-in-0123456789") {
  const behaviours = new Map();
  /** Requests answered per model, for behaviours with `times`. */
  const served = new Map();
  const requests = [];
  const sent = [];
  const sockets = new Set();

  const handle = async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    requests.push({ headers: request.headers, body });
    const model = String(body.model ?? "");
    const sendError = (status, message) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: errorBody(status, model, message) }));
    };
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") return sendError(404, "Not found");
    if (request.headers.authorization !== `Bearer ${apiKey}`) return sendError(401); // [auth], [errors]
    let behaviour = behaviours.get(model);
    if (!behaviour) return sendError(404); // [errors]
    // `times`: this behaviour for its first N requests, then `after` (a 429 twice, then the answer).
    if (behaviour.times !== undefined) {
      const used = (served.get(model) ?? 0) + 1;
      served.set(model, used);
      if (used > behaviour.times) behaviour = behaviour.after ?? { kind: "error", status: 500 };
    }
    // `compute`: the answer is a function of the request alone (the messages, tools and settings sent), so a
    // test knows every check's verdict exactly; it streams like `stream`, a piece per `pieceChars`.
    if (behaviour.kind === "compute") {
      const answer = behaviour.answer(body);
      const content = answer.content ?? "";
      const size = behaviour.pieceChars ?? 8;
      const pieces = [];
      for (let i = 0; i < content.length; i += size) pieces.push(content.slice(i, i + size));
      behaviour = {
        kind: "stream",
        pieces,
        toolCalls: answer.toolCalls,
        delayMs: behaviour.delayMs,
        firstDelayMs: behaviour.firstDelayMs,
        until: behaviour.until,
        usage: answer.usage ?? {
          prompt_tokens: JSON.stringify(body.messages ?? []).length,
          completion_tokens: content.length,
        },
      };
    }
    if (behaviour.kind === "error") {
      if (behaviour.retryAfter !== undefined) response.setHeader("retry-after", String(behaviour.retryAfter));
      return sendError(behaviour.status, behaviour.message);
    }
    if (behaviour.kind === "hang") return; // never answers: the client's timeout must end it
    if (HOSTILE.has(behaviour.kind)) return hostile(behaviour, response, model);

    const id = `chatcmpl-standin${requests.length}`;
    const includeUsage = body.stream_options?.include_usage === true;
    const chunk = (choices, usage) =>
      // [chunk]; [usage]: with include_usage, every chunk carries `usage: null` but the last.
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created: CREATED,
        model,
        system_fingerprint: "fp_standin",
        choices,
        ...(includeUsage ? { usage: usage ?? null } : {}),
      })}\n\n`;
    const choice = (delta, finish = null) => ({
      index: 0,
      delta,
      logprobs: null,
      finish_reason: finish,
    });

    if (body.stream !== true) {
      // Non-streaming: one chat.completion object (not used by the server, answered for completeness).
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created: CREATED,
          model,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: (behaviour.pieces ?? []).join("") },
              finish_reason: "stop",
            },
          ],
          usage: { ...(behaviour.usage ?? { prompt_tokens: 0, completion_tokens: 0 }), total_tokens: 0 },
        }),
      );
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    const frames = [chunk([choice({ role: "assistant", content: "", refusal: null })])];
    // Which frames carry a content piece: their writing time goes to `sent`.
    const contentFrames = new Set();
    for (const piece of behaviour.pieces ?? []) {
      contentFrames.add(frames.length);
      frames.push(chunk([choice({ content: piece })]));
    }
    (behaviour.toolCalls ?? []).forEach((call, index) => {
      // [tools]
      frames.push(
        chunk([
          choice({
            tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
          }),
        ]),
      );
      for (const part of call.argumentPieces) {
        frames.push(chunk([choice({ tool_calls: [{ index, function: { arguments: part } }] })]));
      }
    });
    if (behaviour.garbage !== undefined) frames.push(`data: ${behaviour.garbage}\n\n`);
    frames.push(chunk([choice({}, behaviour.toolCalls?.length ? "tool_calls" : "stop")]));
    if (includeUsage) {
      const usage = behaviour.usage ?? { prompt_tokens: 0, completion_tokens: 0 };
      frames.push(chunk([], { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }));
    }
    frames.push("data: [DONE]\n\n"); // [sse]
    for (let i = 0; i < frames.length; i++) {
      if (behaviour.breakAfter !== undefined && i === behaviour.breakAfter) {
        // What was written has left before the cut, as when a provider's connection drops midway.
        await sleep(20);
        request.socket.destroy();
        return;
      }
      const delay = i === 1 && behaviour.firstDelayMs !== undefined ? behaviour.firstDelayMs : behaviour.delayMs;
      if (delay && i > 0) await sleep(delay);
      if (i === 1 && behaviour.until) await behaviour.until;
      if (response.destroyed) return;
      if (contentFrames.has(i)) sent.push(performance.now());
      response.write(frames[i]);
    }
    response.end();
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    sent,
    apiKey,
    openConnections: () => sockets.size,
    async waitForNoConnections(timeoutMs = 3000) {
      const until = Date.now() + timeoutMs;
      while (sockets.size > 0) {
        if (Date.now() > until) throw new Error(`stand-in: ${sockets.size} connection(s) still open`);
        await sleep(10);
      }
    },
    on(model, behaviour) {
      behaviours.set(model, behaviour);
      served.delete(model);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
