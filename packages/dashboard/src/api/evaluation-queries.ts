/**
 * A prompt's evaluations (docs/evaluations.md, "Evaluations"): started, read, paged case by case, followed
 * while they run, stopped; and the prompt's default check set. Keyed under the prompt (so deleting it forgets
 * them) and, for one evaluation, under the project by id (the release screen reads them too).
 */
import type { Check } from "@promptstore/core/evaluations/checks";
import type {
  CaseClass,
  CaseResultView,
  EvaluationDefaultsView,
  EvaluationView,
} from "@promptstore/core/evaluations/evaluations";
import type { ModelOverride } from "@promptstore/core/run-settings";
import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import type { DraftContent } from "../playground/run-types";
import { get, path, post, put } from "./client";
import { keys } from "./queries";

export type {
  CaseResultView,
  CellView,
  EvaluationDefaultsView,
  EvaluationView,
  VersionSummary,
} from "@promptstore/core/evaluations/evaluations";

/** Which cases a results table shows: all, one class, or the regressions and improvements together. */
export type CaseFilter = "all" | "changed" | CaseClass;

export interface CasesPage {
  items: CaseResultView[];
  next: number | null;
}

export const evaluationKeys = {
  list: (projectId: string, promptId: string) => [...keys.prompt(projectId, promptId), "evaluations"] as const,
  defaults: (projectId: string, promptId: string) =>
    [...keys.prompt(projectId, promptId), "evaluation-defaults"] as const,
  one: (projectId: string, id: string) => ["projects", projectId, "evaluations", id] as const,
  cases: (projectId: string, id: string, only: CaseFilter) =>
    ["projects", projectId, "evaluations", id, "cases", only] as const,
};

const projectPath = (projectId: string) => path`/api/dashboard/projects/${projectId}`;
const promptPath = (projectId: string, promptId: string) => `${projectPath(projectId)}${path`/prompts/${promptId}`}`;
export const evaluationPath = (projectId: string, id: string) => `${projectPath(projectId)}${path`/evaluations/${id}`}`;

/** The prompt's evaluations, newest first (at most 100: the release screen looks for one among them). */
export const evaluationsQuery = (projectId: string, promptId: string, limit = 20) =>
  queryOptions({
    queryKey: [...evaluationKeys.list(projectId, promptId), limit] as const,
    queryFn: () =>
      get<{ evaluations: EvaluationView[] }>(`${promptPath(projectId, promptId)}/evaluations?limit=${limit}`),
  });

/** One evaluation, without its cases (read apart, by filter). An ended one never changes. */
export const evaluationQuery = (projectId: string, id: string) =>
  queryOptions({
    queryKey: evaluationKeys.one(projectId, id),
    queryFn: async () => {
      const { cases: _cases, ...view } = await get<EvaluationView & { cases?: unknown }>(
        `${evaluationPath(projectId, id)}?limit=1`,
      );
      return view as EvaluationView;
    },
    staleTime: (query) => (query.state.data?.status === "running" ? 0 : Number.POSITIVE_INFINITY),
  });

const CASES_PAGE = 50;

/** The cases of one class (or all), a page of 50 at a time, in dataset order. */
export const evaluationCasesQuery = (projectId: string, id: string, only: CaseFilter) =>
  infiniteQueryOptions({
    queryKey: evaluationKeys.cases(projectId, id, only),
    queryFn: ({ pageParam, signal }) =>
      get<CasesPage>(
        `${evaluationPath(projectId, id)}/cases?${new URLSearchParams({
          only,
          limit: String(CASES_PAGE),
          ...(pageParam >= 0 ? { after: String(pageParam) } : {}),
        }).toString()}`,
        signal,
      ),
    initialPageParam: -1,
    getNextPageParam: (page) => page.next,
  });

export const evaluationDefaultsQuery = (projectId: string, promptId: string) =>
  queryOptions({
    queryKey: evaluationKeys.defaults(projectId, promptId),
    queryFn: () => get<EvaluationDefaultsView>(`${promptPath(projectId, promptId)}/evaluation-defaults`),
  });

export interface StartEvaluationBody {
  versions: (string | { draft: DraftContent })[];
  dataset: string;
  checks: Check[];
  connection: string;
  model?: ModelOverride;
  guard?: boolean;
  concurrency?: number;
}

/** Starts one: 202 running, or 200 done at once when every answer and verdict was kept (`reused`). */
export function useStartEvaluation(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: StartEvaluationBody) =>
      post<EvaluationView>(`${promptPath(projectId, promptId)}/evaluations`, body),
    onSuccess: (view) => {
      client.setQueryData(evaluationKeys.one(projectId, view.id), view);
      return client.invalidateQueries({ queryKey: evaluationKeys.list(projectId, promptId) });
    },
  });
}

export function useStopEvaluation(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => post<EvaluationView>(`${evaluationPath(projectId, id)}/stop`, {}),
    onSuccess: (view) => {
      client.setQueryData(evaluationKeys.one(projectId, view.id), view);
      return client.invalidateQueries({ queryKey: evaluationKeys.list(projectId, promptId) });
    },
  });
}

export function useSaveDefaults(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { checks: Check[]; dataset?: string | null }) =>
      put<EvaluationDefaultsView>(`${promptPath(projectId, promptId)}/evaluation-defaults`, body),
    onSuccess: (saved) => client.setQueryData(evaluationKeys.defaults(projectId, promptId), saved),
  });
}
