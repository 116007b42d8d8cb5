// A model for the playground bench: OpenAI chat-completions streaming (`data:` chunks of
// chat.completion.chunk objects, `data: [DONE]`), as test/support/openai-stand-in.ts documents it, with the
// time each piece was written kept in `sent` (performance.now(), this process's clock).
import { createServer } from "node:http";

export async function startModelStandIn({ firstTokenMs, pieces, gapMs }) {
  const apiKey = "sk-bench-stand-in";
  const sent = [];
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const server = createServer(async (request, response) => {
    for await (const _ of request);
    if (request.headers.authorization !== `Bearer ${apiKey}`) {
      response.writeHead(401, { "content-type": "application/json" });
      return response.end(
        JSON.stringify({
          error: {
            message: "Incorrect API key provided",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        }),
      );
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finish = null) =>
      `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    response.write(chunk({ role: "assistant", content: "" }));
    await sleep(firstTokenMs);
    for (let i = 0; i < pieces; i++) {
      if (i > 0) await sleep(gapMs);
      sent.push(performance.now());
      response.write(chunk({ content: `t${i} ` }));
    }
    response.write(chunk({}, "stop"));
    response.end("data: [DONE]\n\n");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    baseUrl: `${url}/v1`,
    apiKey,
    sent,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
