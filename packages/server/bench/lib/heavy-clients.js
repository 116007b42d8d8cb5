// The heavy-work bench's clients, each in a process of its own (forked by heavy.js): the probe that times a plain
// read, and the clients of a heavy job (unpaged lists, dashboard searches). Apart, so that parsing a 40 MB list
// never holds the probe's own event loop and adds to the read times it reports.
import { Agent, request } from "node:http";

/** GET over a keep-alive connection from `address` (127.0.0.x): each client has its own per-address cap. */
function get(url, headers, agent) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request(url, { headers, agent }, (res) => {
      const parts = [];
      res.on("data", (p) => parts.push(p));
      res.on("end", () =>
        resolve({ status: res.statusCode, body: Buffer.concat(parts), ms: performance.now() - started }),
      );
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

const agentFrom = (address) => new Agent({ keepAlive: true, maxSockets: 1, localAddress: address });

/** Reads one prompt, one request at a time with a 5 ms pause, until told to stop; then the times in ms. */
async function probe({ url, key, promptId }) {
  const agent = agentFrom("127.0.0.2");
  const times = [];
  let running = true;
  process.on("message", (m) => {
    if (m === "stop") running = false;
  });
  process.send({ ready: true });
  while (running) {
    const res = await get(`${url}/api/v2/prompts/${promptId}`, { "x-api-key": key }, agent);
    if (res.status !== 200) throw new Error(`probe read answered ${res.status}`);
    times.push(res.ms);
    await new Promise((r) => setTimeout(r, 5));
  }
  agent.destroy();
  return { times };
}

/**
 * `rounds` unpaged lists from `address`; the first must hold `expect` prompts, and each later one the same bytes
 * (nothing changes the store meanwhile): one JSON.parse of 40 MB, not one a round, so the client costs the
 * machine less of what the bench measures.
 */
async function list({ url, path, headers, address, rounds, expect }) {
  // A connection per list: parsing 40 MB holds this client's loop past the server's 5 s keep-alive, and a
  // kept-alive socket the server closed meanwhile was reused before its close was seen ("socket hang up").
  const agent = new Agent({ keepAlive: false, maxSockets: 1, localAddress: address });
  const sizes = [];
  let first;
  for (let round = 0; round < rounds; round++) {
    const res = await get(`${url}${path}`, headers, agent);
    if (res.status !== 200) throw new Error(`list answered ${res.status}`);
    if (first === undefined) {
      const count = JSON.parse(res.body).data.prompts.length;
      if (count !== expect) throw new Error(`list held ${count} prompts, not ${expect}`);
      first = res.body;
    } else if (!res.body.equals(first)) {
      throw new Error(`list ${round + 1} differed from the first (${res.body.length} bytes, not ${first.length})`);
    }
    sizes.push(res.body.length);
  }
  agent.destroy();
  return { sizes };
}

/** The dashboard's searches, each answered with the count of matches it must have. */
async function search({ url, cookie, projectId, address, searches }) {
  const agent = agentFrom(address);
  const times = [];
  for (const { query, matching } of searches) {
    const res = await get(
      `${url}/api/dashboard/projects/${projectId}/prompts?${query}`,
      { cookie: `ps_session=${cookie}` },
      agent,
    );
    if (res.status !== 200) throw new Error(`search ${query} answered ${res.status}: ${res.body}`);
    const found = JSON.parse(res.body).data.matching;
    if (found !== matching) throw new Error(`search ${query} matched ${found}, not ${matching}`);
    times.push(res.ms);
  }
  agent.destroy();
  return { times };
}

const jobs = { probe, list, search };
process.once("message", async ({ job, args }) => {
  let answer;
  try {
    answer = { done: await jobs[job](args) };
  } catch (error) {
    answer = { failed: error.message };
  }
  // Disconnect once the answer is written: a probe's answer of 50 000 times, sent and followed at once by the
  // disconnect, was lost in a run of the export (the parent saw the channel close without it).
  process.send(answer, () => process.disconnect());
});
