/**
 * A prompt's production numbers and fleet (docs/outcomes.md), read with the member's session at the dashboard's
 * mirror of `GET /api/v2/prompts/:id/outcomes` and `…/fleet`. Keyed under the prompt, so deleting it forgets them.
 */
import type { FleetView, OutcomeGrouping, OutcomesView } from "@promptstore/core/outcomes";
import { queryOptions } from "@tanstack/react-query";
import { get, path } from "./client";
import { keys } from "./queries";

export type { FleetView, OutcomeNumbers, OutcomesView } from "@promptstore/core/outcomes";

/** The ranges the Production view offers, and their length. */
export const RANGES = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 } as const;
export type RangeName = keyof typeof RANGES;

const promptPath = (projectId: string, promptId: string) =>
  path`/api/dashboard/projects/${projectId}/prompts/${promptId}`;

/** The last `range` of outcomes, grouped `by`; re-read every 30 s while shown (outcomes are written each second). */
export const outcomesQuery = (projectId: string, promptId: string, range: RangeName, by: OutcomeGrouping) =>
  queryOptions({
    queryKey: [...keys.prompt(projectId, promptId), "outcomes", range, by] as const,
    queryFn: ({ signal }) => {
      const to = Date.now();
      const query = new URLSearchParams({ from: new Date(to - RANGES[range]).toISOString(), by });
      return get<OutcomesView>(`${promptPath(projectId, promptId)}/outcomes?${query.toString()}`, signal);
    },
    refetchInterval: 30_000,
  });

/** What the running clients serve now. */
export const fleetQuery = (projectId: string, promptId: string) =>
  queryOptions({
    queryKey: [...keys.prompt(projectId, promptId), "fleet"] as const,
    queryFn: ({ signal }) => get<FleetView>(`${promptPath(projectId, promptId)}/fleet`, signal),
    refetchInterval: 15_000,
  });
