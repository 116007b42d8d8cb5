/** The one table of plans. `null` means no limit. */
export const PLANS = {
  free: { promptsPerProject: 5, requestsPerMinute: 60, eventStreamsPerOrg: 10 },
  pro: { promptsPerProject: 100, requestsPerMinute: 1000, eventStreamsPerOrg: 1000 },
  unlimited: { promptsPerProject: null, requestsPerMinute: null, eventStreamsPerOrg: null },
} as const satisfies Record<
  string,
  { promptsPerProject: number | null; requestsPerMinute: number | null; eventStreamsPerOrg: number | null }
>;

export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export function isPlanName(value: string): value is PlanName {
  return Object.hasOwn(PLANS, value);
}

/** The limits of a plan by name; an unknown name (a plan removed from code) gets the free plan's. */
export function planLimits(name: string): (typeof PLANS)[PlanName] {
  return isPlanName(name) ? PLANS[name] : PLANS.free;
}
