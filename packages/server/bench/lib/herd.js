import http from "node:http";
import { startCountingServer } from "./processes.js";

export const HERD_CLIENTS = Number(process.env.BENCH_HERD_CLIENTS ?? 1000);
export const HERD_PUBLISHES = Number(process.env.BENCH_HERD_PUBLISHES ?? 10);

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * The thundering herd: `clients` clients, each on its own open keep-alive connection, re-read a prompt
 * at the same moment right after a publish, `publishes` times (alternating two versions). Reports how
 * many reads reached the database for each publish (the server's own counter) and the latency of the
 * herd's requests. Every answer must be a 200 serving the version just published.
 */
export async function herdBench(
  label,
  databaseUrl,
  seeded,
  { clients = HERD_CLIENTS, publishes = HERD_PUBLISHES } = {},
) {
  // Every client connects from 127.0.0.1, as through one load balancer: the per-address connection cap (256 by
  // default without a trusted proxy) would turn most of the herd away.
  const server = await startCountingServer(databaseUrl, { PROMPTSTORE_MAX_CONNECTIONS_PER_IP: "0" });
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients, maxFreeSockets: clients });
  const headers = { "x-api-key": seeded.key };
  const request = (method, path, body) =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = http.request(
        `${server.url}${path}`,
        { method, agent, headers: body ? { ...headers, "content-type": "application/json" } : headers },
        (res) => {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            resolve({ status: res.statusCode, ms, body: Buffer.concat(chunks).toString() });
          });
        },
      );
      req.on("error", reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  const path = `/api/v2/prompts/${seeded.promptId}`;
  try {
    const history = JSON.parse((await request("GET", `${path}/versions`)).body).data.versions;
    const targets = [history[0].version, history[1].version];
    // Every connection is opened (and the server warmed) before the first publish: the herd measures
    // reads, not TCP handshakes.
    for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: clients }, () => request("GET", path)));

    const readsPerPublish = [];
    const latencies = [];
    let wrong = 0;
    for (let n = 0; n < publishes; n++) {
      const target = targets[n % 2];
      const published = await request("POST", `${path}/publish`, { version: target });
      if (published.status !== 200) throw new Error(`publish answered ${published.status}: ${published.body}`);
      const before = await server.reads();
      const answers = await Promise.all(Array.from({ length: clients }, () => request("GET", path)));
      readsPerPublish.push((await server.reads()) - before);
      for (const answer of answers) {
        latencies.push(answer.ms);
        if (answer.status !== 200 || JSON.parse(answer.body).data.version !== target) wrong++;
      }
    }
    latencies.sort((a, b) => a - b);
    const row = {
      label,
      name: `${label}: the herd, ${clients} clients re-reading right after each of ${publishes} publishes`,
      clients,
      readsPerPublish,
      p50: Math.round(percentile(latencies, 50)),
      p99: Math.round(percentile(latencies, 99)),
      wrong,
    };
    console.log(
      `${row.name}: database reads per publish ${readsPerPublish.join(", ")}; p50 ${row.p50} ms, p99 ${row.p99} ms` +
        `${wrong ? `; ${wrong} WRONG ANSWERS` : ""}`,
    );
    return row;
  } finally {
    agent.destroy();
    await server.stop();
  }
}
