// The guardrails' error rates on simulated traffic, with more rollouts than the tests run
// (packages/core/test/rollouts/simulation.test.ts has the same scenarios, seeded). No server: the statistics
// are core's pure functions. Writes its section of bench/results.md between the guardrails markers.
// BENCH_GUARDRAIL_RUNS (10 000), BENCH_GUARDRAIL_LATENCY_RUNS (1 000) and BENCH_GUARDRAIL_ALL_RUNS (400) scale it.
import { loadavg } from "node:os";
import { allPlan, latencyPlan, okScorePlan } from "@promptstore/core/testing/rollout-scenarios";
import { simulateRollouts } from "@promptstore/core/testing/rollout-simulation";
import { writeSection } from "./lib/model-bench.js";

const START = "<!-- guardrails bench: start -->";
const END = "<!-- guardrails bench: end -->";
const RUNS = Number(process.env.BENCH_GUARDRAIL_RUNS ?? 10_000);
const LATENCY_RUNS = Number(process.env.BENCH_GUARDRAIL_LATENCY_RUNS ?? 1_000);
const ALL_RUNS = Number(process.env.BENCH_GUARDRAIL_ALL_RUNS ?? 400);

const percent = (count, runs) => `${((100 * count) / runs).toFixed(2)}% (${count} of ${runs})`;
/** A 95% interval for a rate from a count (Wilson), so a reader sees how far the measure may be off. */
function wilson(count, runs) {
  const z = 1.959963984540054;
  const p = count / runs;
  const centre = (p + (z * z) / (2 * runs)) / (1 + (z * z) / runs);
  const half = (z / (1 + (z * z) / runs)) * Math.sqrt((p * (1 - p)) / runs + (z * z) / (4 * runs * runs)) * 100;
  return `${(centre * 100 - half).toFixed(2)}–${(centre * 100 + half).toFixed(2)}%`;
}

const rows = [];
/** Runs one scenario once and adds a row per claim: [claim, asked, count of the tally, "abort" | "advance"]. */
function measure(seed, runs, scenario, within, claims) {
  const started = process.cpuUsage();
  const tally = simulateRollouts(seed, runs, scenario, within);
  const used = process.cpuUsage(started);
  const cpu = `${((used.user + used.system) / 1e6).toFixed(1)} s for ${runs} rollouts`;
  for (const [claim, asked, count, at] of claims(tally)) {
    const median = at === "abort" ? tally.medianAbortAt : tally.medianFirstAdvanceAt;
    const row = {
      claim,
      asked,
      measured: percent(count, runs),
      interval: wilson(count, runs),
      median: median ?? "",
      cpu,
    };
    rows.push(row);
    console.log(row);
  }
}

const plan = okScorePlan();
const latency = latencyPlan();
const all = allPlan();
measure(101, RUNS, plan.equal, plan.outcomes, (t) => [
  ["ok rate and score, nothing changed: false aborts", "≤ 5%", t.aborted, "abort"],
  [`… every guardrail held within ${plan.outcomes} candidate outcomes`, "≥ 95%", t.heldWithin, "advance"],
]);
measure(102, RUNS, plan.okWorse, plan.okOutcomes, (t) => [
  [`ok rate 0.95 → 0.90: aborted within ${plan.okOutcomes} candidate outcomes`, "≥ 95%", t.abortedWithin, "abort"],
]);
measure(103, RUNS, plan.scoreWorse, plan.scoreOutcomes, (t) => [
  [`mean score 0.80 → 0.75: aborted within ${plan.scoreOutcomes}`, "≥ 95%", t.abortedWithin, "abort"],
]);
measure(104, RUNS, plan.okAtMargin, 3 * plan.outcomes, (t) => [
  [`ok rate exactly 2.5 points lower (50% step): aborted within ${3 * plan.outcomes}`, "≤ 2.5%", t.aborted, "abort"],
  [`… held (a false advance) within ${3 * plan.outcomes}`, "≤ 2.5%", t.heldWithin, "advance"],
]);
measure(105, LATENCY_RUNS, latency.equal, latency.outcomes, (t) => [
  ["latency p95 (steps from 5%), nothing changed: false aborts", "≤ 5%", t.aborted, "abort"],
  [`… held within ${latency.outcomes}`, "", t.heldWithin, "advance"],
]);
measure(106, LATENCY_RUNS, latency.worse, latency.outcomes, (t) => [
  [`latency p95 × 1.69: aborted within ${latency.outcomes}`, "", t.abortedWithin, "abort"],
]);
measure(107, ALL_RUNS, all.equal, all.outcomes, (t) => [
  [
    "all three guardrails (α shared three ways), steps from 1%, nothing changed: false aborts",
    "≤ 5%",
    t.aborted,
    "abort",
  ],
  [`… every guardrail held within ${all.outcomes}`, "≥ 95%", t.heldWithin, "advance"],
]);

const section = [
  START,
  "## Guardrail statistics",
  "",
  `Written by \`node packages/server/bench/guardrails.js\` on ${new Date().toISOString()}. Seeded simulated rollouts`,
  '(packages/core/src/testing/rollout-scenarios.ts; docs/rollouts.md "Measured error rates" says what each is): one',
  "evaluation a minute at 1000 outcomes a minute, ok rate 0.95, scores 1/½/0 at 0.7/0.2/0.1, log-normal latencies",
  "(median 800 ms, σ 0.5) in buckets 9% apart; X = Y = 2.5 points, Z = 30%, α = 0.05, power 0.95. The interval is",
  "Wilson's 95% interval for the measured rate.",
  "",
  "| Claim | Asked | Measured | 95% interval | Median candidate outcomes at the decision | CPU |",
  "|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.claim} | ${r.asked} | ${r.measured} | ${r.interval} | ${r.median} | ${r.cpu} |`),
  "",
  `Load average ${loadavg()[0].toFixed(1)} when written.`,
  END,
].join("\n");
writeSection(START, END, section);
