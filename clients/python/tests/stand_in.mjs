#!/usr/bin/env node
/**
 * The OpenAI stand-in of the server's tests (packages/server/test/support/openai-stand-in.js) for the Python
 * tests, which start it with `node`: models that answer the system prompt they were sent, in capitals, so
 * every verdict of an evaluation is known exactly. `caps` answers at once, `slow` after 400 ms.
 *
 * It prints one JSON line, `{ "url", "base_url", "api_key" }`, once it listens. Then every line read on
 * standard input is a question: `requests` answers `{ "requests": <how many it was asked> }`. It stops when
 * standard input closes (the test process ended or closed it).
 */
import { createInterface } from "node:readline";
import { startStandIn } from "../../../packages/server/test/support/openai-stand-in.js";

const standIn = await startStandIn();
const capitals = (extra = {}) => ({
  kind: "compute",
  answer: (body) => ({ content: String(body.messages[0].content).toUpperCase() }),
  ...extra,
});
standIn.on("caps", capitals());
standIn.on("slow", capitals({ firstDelayMs: 400 }));

process.stdout.write(`${JSON.stringify({ url: standIn.url, base_url: standIn.baseUrl, api_key: standIn.apiKey })}\n`);

const input = createInterface({ input: process.stdin });
input.on("line", (line) => {
  if (line.trim() === "requests") process.stdout.write(`${JSON.stringify({ requests: standIn.requests.length })}\n`);
});
input.on("close", async () => {
  await standIn.close();
  process.exit(0);
});
