/**
 * Simulated traffic for guarded rollouts, with known effects: the tests' and the bench's measure of the
 * guardrails' false aborts and power (docs/rollouts.md "Measured error rates"). Deterministic: a seed gives
 * the same rollouts in every runtime.
 *
 * A rollout is a list of steps (the candidate's share of the label's outcomes); each minute the label gets
 * `perMinute` outcomes, each going to the candidate with the step's share. Every minute the guardrails are
 * judged on all the rollout's steps so far, and the step aborts, advances or waits as `stepVerdict` says;
 * a step's minimum is a number of candidate outcomes within it.
 */
import { gammaln } from "simple-statistics";
import {
  type ArmTotals,
  evaluateGuardrails,
  type GuardrailOptions,
  type GuardrailResult,
  type GuardrailThresholds,
  type StepTotals,
  stepVerdict,
} from "../rollouts/guardrails.js";

/** xoshiro128** (Blackman & Vigna), seeded through splitmix32: uniform doubles in [0, 1). */
export function seededRandom(seed: number): () => number {
  let x = seed >>> 0;
  const splitmix = () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result / 4294967296;
  };
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * A Binomial(n, q) draw, exact. With few successes expected, the gaps between them are drawn (geometric);
 * with more, the distribution is inverted from its mode outwards (m, m − 1, m + 1, m − 2, …), which visits
 * about √(n·q(1 − q)) terms: any fixed order of the outcomes inverts exactly.
 */
export function binomial(random: () => number, n: number, q: number): number {
  if (q <= 0 || n <= 0) return 0;
  if (q >= 1) return n;
  if (q > 0.5) return n - binomial(random, n, 1 - q);
  if (n * q < 16) {
    const logMiss = Math.log1p(-q);
    let count = 0;
    let position = 0;
    for (;;) {
      // trials up to and including the next success: 1 + floor(log U / log(1 − q))
      position += 1 + Math.floor(Math.log(1 - random()) / logMiss);
      if (position > n) return count;
      count++;
    }
  }
  const mode = Math.min(n, Math.floor((n + 1) * q));
  const odds = q / (1 - q);
  const atMode = Math.exp(
    gammaln(n + 1) - gammaln(mode + 1) - gammaln(n - mode + 1) + mode * Math.log(q) + (n - mode) * Math.log1p(-q),
  );
  let u = random() - atMode;
  if (u <= 0) return mode;
  let down = mode;
  let up = mode;
  let pDown = atMode;
  let pUp = atMode;
  while (down > 0 || up < n) {
    if (down > 0) {
      pDown *= down / ((n - down + 1) * odds);
      down--;
      u -= pDown;
      if (u <= 0) return down;
    }
    if (up < n) {
      pUp *= ((n - up) * odds) / (up + 1);
      up++;
      u -= pUp;
      if (u <= 0) return up;
    }
  }
  return mode; // rounding left a sliver of probability unassigned
}

/** A standard normal draw (Box–Muller, one of the pair). */
export function normal(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** How one version's answers go. */
export interface ArmModel {
  /** P(ok). */
  ok: number;
  /** Scores take these values with these probabilities; every outcome carries one. */
  scores?: { values: readonly number[]; probabilities: readonly number[] } | undefined;
  /** Latency in ms: log-normal with this median and log-scale sigma. Drawn only when bounds are given. */
  latency?: { median: number; sigma: number } | undefined;
}

/** Log-scale bucket bounds: `first`, then ×`ratio` each, `count` bounds in all. */
export function logBuckets(first: number, ratio: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first * ratio ** i);
}

function emptyArm(buckets: number): ArmTotals {
  return { count: 0, ok: 0, score_count: 0, score_sum: 0, score_sum_sq: 0, latency: new Array(buckets).fill(0) };
}

/** n outcomes of one arm, folded into its step's totals. */
export function drawArm(
  random: () => number,
  model: ArmModel,
  n: number,
  into: ArmTotals,
  bounds: readonly number[] | undefined,
): void {
  into.count += n;
  into.ok += binomial(random, n, model.ok);
  if (model.scores) {
    let left = n;
    let mass = 1;
    const { values, probabilities } = model.scores;
    for (let i = 0; i < values.length && left > 0; i++) {
      const p = probabilities[i]!;
      const k = i === values.length - 1 ? left : binomial(random, left, Math.min(1, p / mass));
      mass -= p;
      left -= k;
      into.score_count += k;
      into.score_sum += k * values[i]!;
      into.score_sum_sq = (into.score_sum_sq ?? 0) + k * values[i]! * values[i]!;
    }
  }
  if (bounds && model.latency && into.latency) {
    const histogram = into.latency as number[];
    const logFirst = Math.log(bounds[0]!);
    const logRatio = bounds.length > 1 ? Math.log(bounds[1]! / bounds[0]!) : 1;
    const logMedian = Math.log(model.latency.median);
    for (let i = 0; i < n; i++) {
      const logL = logMedian + model.latency.sigma * normal(random);
      const bucket = logL <= logFirst ? 0 : Math.ceil((logL - logFirst) / logRatio);
      histogram[Math.min(bucket, bounds.length)]! += 1;
    }
  }
}

export interface RolloutScenario {
  /** The candidate's share in each step, e.g. [0.01, 0.05, 0.25, 0.5]; after the last the rollout completes. */
  shares: readonly number[];
  /** Candidate outcomes each step needs before it may advance. */
  minimumOutcomes: number;
  /** The label's outcomes per minute (both arms). */
  perMinute: number;
  current: ArmModel;
  candidate: ArmModel;
  thresholds: GuardrailThresholds;
  options?: GuardrailOptions;
  /** A step that has not decided after this many minutes ends the rollout as "stalled". */
  maxMinutesPerStep: number;
  /** Stop (as "stopped") once the candidate has had this many outcomes; for power runs. */
  stopAfterCandidateOutcomes?: number;
}

export interface RolloutRun {
  end: "aborted" | "completed" | "stalled" | "stopped";
  /** The step the rollout ended in (shares.length when it completed). */
  step: number;
  /** Candidate outcomes when it ended (all steps). */
  candidateOutcomes: number;
  /** Candidate outcomes when the first step advanced, if it did. */
  firstAdvanceAt: number | null;
  /** Candidate outcomes when every guardrail first held (minimums aside), if they did. */
  firstHoldAt: number | null;
  /** The guardrail that broke, on an abort. */
  breached: GuardrailResult["guardrail"][];
}

export function simulateRollout(random: () => number, scenario: RolloutScenario): RolloutRun {
  const bounds = scenario.options?.latency_bounds;
  const buckets = bounds ? bounds.length + 1 : 0;
  const steps: StepTotals[] = [];
  let candidateOutcomes = 0;
  let firstAdvanceAt: number | null = null;
  let firstHoldAt: number | null = null;
  for (let step = 0; step < scenario.shares.length; step++) {
    const share = scenario.shares[step]!;
    const totals: StepTotals = { current: emptyArm(buckets), candidate: emptyArm(buckets) };
    steps.push(totals);
    let advanced = false;
    for (let minute = 0; minute < scenario.maxMinutesPerStep && !advanced; minute++) {
      const toCandidate = binomial(random, scenario.perMinute, share);
      drawArm(random, scenario.candidate, toCandidate, totals.candidate, bounds);
      drawArm(random, scenario.current, scenario.perMinute - toCandidate, totals.current, bounds);
      candidateOutcomes += toCandidate;
      const results = evaluateGuardrails(steps, scenario.thresholds, scenario.options);
      const verdict = stepVerdict(results, totals.candidate.count >= scenario.minimumOutcomes);
      if (firstHoldAt === null && stepVerdict(results, true) === "advance") firstHoldAt = candidateOutcomes;
      if (verdict === "abort") {
        const breached = results.filter((r) => r.decision === "breached").map((r) => r.guardrail);
        return { end: "aborted", step, candidateOutcomes, firstAdvanceAt, firstHoldAt, breached };
      }
      if (
        scenario.stopAfterCandidateOutcomes !== undefined &&
        candidateOutcomes >= scenario.stopAfterCandidateOutcomes
      ) {
        return { end: "stopped", step, candidateOutcomes, firstAdvanceAt, firstHoldAt, breached: [] };
      }
      if (verdict === "advance") {
        advanced = true;
        if (step === 0) firstAdvanceAt = candidateOutcomes;
      }
    }
    if (!advanced) return { end: "stalled", step, candidateOutcomes, firstAdvanceAt, firstHoldAt, breached: [] };
  }
  return {
    end: "completed",
    step: scenario.shares.length,
    candidateOutcomes,
    firstAdvanceAt,
    firstHoldAt,
    breached: [],
  };
}

export interface RolloutTally {
  runs: number;
  aborted: number;
  completed: number;
  stalled: number;
  stopped: number;
  /** Aborted with at most this many candidate outcomes (the `within` given). */
  abortedWithin: number;
  /** Every guardrail held with at most `within` candidate outcomes. */
  heldWithin: number;
  /** The median candidate outcomes at an abort, or at the first step's advance. */
  medianAbortAt: number | null;
  medianFirstAdvanceAt: number | null;
}

const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** `runs` rollouts of one scenario from one seed, tallied; `within` is the outcomes a claim is made for. */
export function simulateRollouts(seed: number, runs: number, scenario: RolloutScenario, within: number): RolloutTally {
  const random = seededRandom(seed);
  const tally: RolloutTally = {
    runs,
    aborted: 0,
    completed: 0,
    stalled: 0,
    stopped: 0,
    abortedWithin: 0,
    heldWithin: 0,
    medianAbortAt: null,
    medianFirstAdvanceAt: null,
  };
  const abortsAt: number[] = [];
  const advancesAt: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = simulateRollout(random, scenario);
    tally[run.end]++;
    if (run.end === "aborted") {
      abortsAt.push(run.candidateOutcomes);
      if (run.candidateOutcomes <= within) tally.abortedWithin++;
    }
    if (run.firstAdvanceAt !== null) advancesAt.push(run.firstAdvanceAt);
    if (run.firstHoldAt !== null && run.firstHoldAt <= within) tally.heldWithin++;
  }
  tally.medianAbortAt = median(abortsAt);
  tally.medianFirstAdvanceAt = median(advancesAt);
  return tally;
}
