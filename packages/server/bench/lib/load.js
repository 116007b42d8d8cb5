import autocannon from "autocannon";
import { peakRssMb, resetPeakRss } from "./processes.js";

export const CONNECTIONS = 50;
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 3);

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * Loads one target: a warm-up, then the measured run. Returns requests per second, p50/p99 latency in
 * ms, the count of non-2xx answers, and the peak RSS of `pid` during the measured run.
 */
export async function measure(name, { url, pid, connections = CONNECTIONS, ...options }) {
  await run({ url, connections, duration: WARMUP_S, ...options });
  if (pid) resetPeakRss(pid);
  const result = await run({ url, connections, duration: DURATION_S, ...options });
  const row = {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    total: result.requests.total,
    rssMb: pid ? peakRssMb(pid) : undefined,
  };
  console.log(
    `${name.padEnd(58)} ${row.rps.toFixed(0).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms` +
      `${row.rssMb ? `  peak RSS ${row.rssMb.toFixed(1)} MB` : ""}${row.non2xx ? `  NON-2XX ${row.non2xx}` : ""}`,
  );
  return row;
}
