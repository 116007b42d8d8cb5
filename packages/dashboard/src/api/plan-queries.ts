/**
 * A label's rollout plan (docs/rollouts.md "Plans"), read and commanded with the member's session at the
 * dashboard's mirror of `…/prompts/:id/labels/:label/plan`. Keyed under the prompt, so whatever refreshes the
 * prompt (a label moved) reads its plans again too.
 */
import type { PlanView } from "@promptstore/core/rollouts/plan-view";
import type { PlanRequest } from "@promptstore/core/rollouts/plans";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiError, get, path, post } from "./client";
import { keys } from "./queries";
import { releaseKeys } from "./release-queries";

export type { PlanDecisionOut, PlanView } from "@promptstore/core/rollouts/plan-view";

export type PlanCommand = "pause" | "resume" | "advance" | "abort";

/** How often a running or paused plan is read again: about the server's own tick (5 s by default). */
export const PLAN_REFRESH_MS = 3_000;
/** A label without an active plan is looked at now and then, so a plan started elsewhere shows. */
export const IDLE_REFRESH_MS = 30_000;

const planPath = (projectId: string, promptId: string, label: string) =>
  path`/api/dashboard/projects/${projectId}/prompts/${promptId}/labels/${label}/plan`;

export const planKey = (projectId: string, promptId: string, label: string) =>
  [...keys.prompt(projectId, promptId), "plan", label] as const;

export const isActive = (plan: PlanView | null | undefined): boolean =>
  plan?.status === "running" || plan?.status === "paused";

/** The label's newest plan, or null when it never had one (the server's 404). */
export const planQuery = (projectId: string, promptId: string, label: string) =>
  queryOptions({
    queryKey: planKey(projectId, promptId, label),
    queryFn: async ({ signal }) => {
      try {
        return await get<PlanView>(planPath(projectId, promptId, label), signal);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
    refetchInterval: (query) => (isActive(query.state.data) ? PLAN_REFRESH_MS : IDLE_REFRESH_MS),
  });

/** The prompt's plans on every label, newest first, with their decisions: the History tab's rollout lines. */
export const promptPlansQuery = (projectId: string, promptId: string) =>
  queryOptions({
    queryKey: [...keys.prompt(projectId, promptId), "plans"] as const,
    queryFn: ({ signal }) =>
      get<{ plans: PlanView[] }>(path`/api/dashboard/projects/${projectId}/prompts/${promptId}/plans`, signal),
    refetchInterval: (query) => (query.state.data?.plans.some(isActive) ? PLAN_REFRESH_MS : IDLE_REFRESH_MS),
  });

/** After a plan changes the label: the prompt's views, versions and plans, and the labels in use. */
function refreshAfter(client: ReturnType<typeof useQueryClient>, projectId: string, promptId: string, view: PlanView) {
  client.setQueryData(planKey(projectId, promptId, view.label), view);
  return Promise.all([
    client.invalidateQueries({ queryKey: keys.prompt(projectId, promptId) }),
    client.invalidateQueries({ queryKey: releaseKeys.labels(projectId) }),
  ]);
}

/** Starts a plan on an unprotected label: it rolls out to the first step now. */
export function useStartPlan(projectId: string, promptId: string, label: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: PlanRequest) => post<PlanView>(planPath(projectId, promptId, label), body),
    onSuccess: (view) => refreshAfter(client, projectId, promptId, view),
  });
}

/** Pauses, resumes, advances or aborts the label's plan; the server says whether this person may. */
export function usePlanCommand(projectId: string, promptId: string, label: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (command: PlanCommand) => post<PlanView>(`${planPath(projectId, promptId, label)}/${command}`),
    onSuccess: (view) => refreshAfter(client, projectId, promptId, view),
    // A refusal may come from a plan that moved meanwhile: read it again.
    onError: () => client.invalidateQueries({ queryKey: planKey(projectId, promptId, label) }),
  });
}
