// The reading application of the outcomes bench, in a process of its own as a real one is: its latencies are
// not delayed by the load generator's own work (building and sending 20 batches a second in the bench's
// process). Forked by outcomes.js with { url, key, promptId, seconds, perSecond, address }; sends back
// { latencies, failed } and exits.
import { Agent, request } from "node:http";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function get(agent, url, key) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { agent, headers: { "x-api-key": key } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on("error", reject);
    req.end();
  });
}

process.once("message", async ({ url, key, promptId, seconds, perSecond, address }) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 8, localAddress: address });
  const latencies = [];
  let failed = 0;
  const pending = [];
  const interval = 1000 / perSecond;
  const start = Date.now();
  for (let i = 0; Date.now() - start < seconds * 1000; i++) {
    pending.push(
      get(agent, `${url}/api/v2/prompts/${promptId}`, key).then(
        (r) => (r.status === 200 ? latencies.push(r.ms) : failed++),
        () => failed++,
      ),
    );
    const wait = start + (i + 1) * interval - Date.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(pending);
  agent.destroy();
  process.send({ latencies, failed }, () => process.exit(0));
});
