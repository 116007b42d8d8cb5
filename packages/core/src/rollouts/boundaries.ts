/**
 * The boundaries behind a guarded rollout's sequential tests (docs/rollouts.md "Guardrail statistics"). Pure
 * arithmetic, no I/O. Two mixture martingales, each turned into a boundary by Ville's inequality
 * (P(sup_t M_t ≥ 1/α) ≤ α for a nonnegative martingale M with M_0 = 1):
 *
 * 1. The two-sided normal mixture (Robbins 1970). For a process S(v) that behaves as a Brownian motion in its
 *    intrinsic time v, mixing exp(λS − λ²v/2) over λ ~ N(0, 1/ρ) gives
 *      M(s, v) = sqrt(ρ / (v + ρ)) · exp(s² / (2(v + ρ))),
 *    and M ≥ 1/α exactly when |s| ≥ f(v) = sqrt((v + ρ) · (log(1 + v/ρ) + 2 log(1/α))).
 *    This is the normal-mixture boundary of Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform,
 *    nonparametric, nonasymptotic confidence sequences", Annals of Statistics 49(2):1055–1080 (2021),
 *    Section 3; ρ is tuned to make f smallest near a chosen time m with their rule
 *      ρ = m / (2 log(1/α) + log(1 + 2 log(1/α)))
 *    (the `best_rho` of the authors' confseq library). Used with a plug-in variance it is the asymptotic
 *    confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central limit
 *    theory and asymptotic confidence sequences", Annals of Statistics 52(6):2613–2640 (2024), and, for a
 *    difference of means, the confidence interval of the mSPRT of Johari, Koomen, Pekelis & Walsh, "Always
 *    valid inference: continuous monitoring of A/B tests", Operations Research 70(3):1806–1821 (2022).
 *
 * 2. The beta-binomial mixture for a count of Bernoulli(p) successes with p known: the likelihood ratio of
 *    Beta(kp, k(1 − p)) mixed over θ against θ = p,
 *      M(s, t) = B(kp + s, k(1 − p) + t − s) / (B(kp, k(1 − p)) · p^s · (1 − p)^(t − s)),
 *    a martingale with mean 1 under p (the conjugate mixture of Robbins 1970, used for quantiles by Howard &
 *    Ramdas, "Sequential estimation of quantiles with applications to A/B-testing and best-arm
 *    identification", Bernoulli 28(3):1704–1728, 2022). Exact: no normal approximation.
 *
 * Special functions come from simple-statistics (log-gamma by Lanczos' series; the normal quantile refined
 * here by Newton steps on its error function).
 */
import { errorFunction, gammaln, probit } from "simple-statistics";

/** ρ/m for the normal mixture tuned at time m: 1 / (2 log(1/α) + log(1 + 2 log(1/α))) (Howard et al. 2021). */
export function mixtureTuning(alpha: number): number {
  const twoL = 2 * Math.log(1 / alpha);
  return 1 / (twoL + Math.log(1 + twoL));
}

/** The ρ of a two-sided normal mixture whose boundary is (nearly) smallest at intrinsic time `at`. */
export function bestRho(at: number, alpha: number): number {
  return at * mixtureTuning(alpha);
}

/**
 * The two-sided normal-mixture boundary f(v) = sqrt((v + ρ)(log(1 + v/ρ) + 2 log(1/α))): with probability at
 * least 1 − α, |S(v)| < f(v) at every v at once, when S is a Brownian motion in v.
 */
export function normalMixtureBoundary(v: number, rho: number, alpha: number): number {
  return Math.sqrt((v + rho) * (Math.log1p(v / rho) + 2 * Math.log(1 / alpha)));
}

/** log M(s, v) of the two-sided normal mixture: log(1/α) or more exactly when |s| ≥ the boundary at v. */
export function normalMixtureLog(s: number, v: number, rho: number): number {
  return 0.5 * Math.log(rho / (v + rho)) + (s * s) / (2 * (v + rho));
}

/**
 * f(m)/√m when ρ is tuned at m: sqrt((1 + r)(log(1 + 1/r) + 2 log(1/α))) with r = ρ/m. The always-valid
 * interval at its tuning time is ± this many standard errors (3.03 at α = 0.05; a fixed-sample one is 1.96).
 */
export function mixtureWidthAtTuning(alpha: number): number {
  const r = mixtureTuning(alpha);
  return Math.sqrt((1 + r) * (Math.log1p(1 / r) + 2 * Math.log(1 / alpha)));
}

/** The standard normal quantile: simple-statistics' probit (about 1e-3 off) refined by Newton steps on Φ. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError("normalQuantile needs 0 < p < 1");
  const cdf = (z: number) => 0.5 * (1 + errorFunction(z / Math.SQRT2));
  let z = probit(p);
  for (let step = 0; step < 4; step++) {
    const density = Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);
    z -= (cdf(z) - p) / density;
  }
  return z;
}

/** log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a + b). */
export function logBeta(a: number, b: number): number {
  return gammaln(a) + gammaln(b) - gammaln(a + b);
}

/**
 * log M(s, t) of the beta-binomial mixture: s successes in t trials tested against success probability p,
 * mixing over θ ~ Beta(kp, k(1 − p)). k > 0 is the prior's concentration (see `betaBinomialConcentration`).
 */
export function betaBinomialLog(s: number, t: number, p: number, k: number): number {
  const a = k * p;
  const b = k * (1 - p);
  return logBeta(a + s, b + t - s) - logBeta(a, b) - s * Math.log(p) - (t - s) * Math.log1p(-p);
}

/**
 * The concentration k of the beta-binomial mixture that matches the normal mixture tuned at `at` trials: the
 * Beta prior's variance p(1 − p)/(k + 1) equals the normal mixing variance p²(1 − p)²/ρ with ρ tuned at
 * intrinsic time at·p(1 − p), so k + 1 = at · ρ/m. Never below 1.
 */
export function betaBinomialConcentration(at: number, alpha: number): number {
  return Math.max(1, at * mixtureTuning(alpha) - 1);
}
