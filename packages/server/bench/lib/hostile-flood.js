// The far side of bench/hostile-provider.js, in a process of its own so that the bench's process does nothing
// but ask /healthz: the tests' OpenAI stand-in, and the clients that start runs against it and read them.
// Told what to do over IPC: { flood: { server, key, prompt, connection, model, behaviour, parallel, seconds } }.
import { startStandIn } from "../../test/support/openai-stand-in.js";

const standIn = await startStandIn();
process.send({ baseUrl: standIn.baseUrl, apiKey: standIn.apiKey });

process.on("message", async (message) => {
  if (message === "close") {
    await standIn.close();
    process.exit(0);
  }
  const { server, key, prompt, connection, model, behaviour, parallel, seconds } = message.flood;
  standIn.on(model, behaviour);
  const ends = {};
  let runs = 0;
  const started = performance.now();
  do {
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        const res = await fetch(`${server}/api/v2/prompts/${prompt}/run`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ connection, model: { name: model } }),
        });
        const text = await res.text();
        const code =
          text.match(/event: error\ndata: \{"code":"([a-z_]+)"/)?.[1] ?? (res.status === 200 ? "done" : res.status);
        ends[code] = (ends[code] ?? 0) + 1;
        runs++;
      }),
    );
  } while (performance.now() - started < seconds * 1000);
  await standIn.waitForNoConnections(10_000).catch(() => {});
  process.send({ runs, ends, seconds: (performance.now() - started) / 1000 });
});
