// An application as a team writes one (issue 40's end-to-end test): it reads the prompt with the TypeScript
// client for a stream of users (`assign`: each user's sticky arm), asks the model (the OpenAI stand-in) with the
// text it got, and records whether the answer was usable. Every read is a line on stdout: `<epoch ms> <version>`.
// It stops when its stdin closes, and sends its last outcomes before it exits.
import { Promptstore } from "@promptstore/client";

const { PROMPTSTORE_URL, PROMPTSTORE_API_KEY, MODEL_URL, MODEL_KEY, PROMPT_ID, APP_NAME } = process.env;
const client = new Promptstore({
  baseUrl: PROMPTSTORE_URL,
  apiKey: PROMPTSTORE_API_KEY,
  outcomes: { batchSize: 100, flushIntervalMs: 200 },
});
let stopping = false;
process.stdin.on("end", () => {
  stopping = true;
});
process.stdin.resume();

const lines = [];
const writeLines = () => {
  if (lines.length > 0) process.stdout.write(lines.splice(0).join(""));
};
const flushTimer = setInterval(writeLines, 50);

for (let i = 0; !stopping; i++) {
  const read = await client.get(PROMPT_ID, { assign: `${APP_NAME}-user-${i}` });
  const started = performance.now();
  const response = await fetch(`${MODEL_URL}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${MODEL_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "app",
      messages: [
        { role: "system", content: read.prompt },
        { role: "user", content: `question ${i} from ${APP_NAME}` },
      ],
    }),
  });
  const answer = (await response.json()).choices[0].message.content;
  client.record(read, { ok: answer !== "REFUSED", latency_ms: performance.now() - started });
  lines.push(`${Date.now()} ${read.version}\n`);
  // About 200 reads a second: a busy service, not a flood.
  await new Promise((resolve) => setTimeout(resolve, 5));
}
clearInterval(flushTimer);
writeLines();
await client.close();
console.error(JSON.stringify(client.outcomeStats()));
