/**
 * A prompt's saved examples and the results kept for them per version (docs/playground.md, "Saved
 * examples"). Keyed under the prompt, so deleting the prompt forgets them with everything else of it.
 */
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import type { ChatMessage, Example, ExampleResult } from "../playground/run-types";
import { del, get, patch, path, post } from "./client";
import { keys } from "./queries";

export interface ExampleBody {
  name: string;
  variables?: Record<string, string>;
  messages?: ChatMessage[];
  good_answer?: string | null;
}

export const exampleKeys = {
  list: (projectId: string, promptId: string) => [...keys.prompt(projectId, promptId), "examples"] as const,
  results: (projectId: string, promptId: string, version: string) =>
    [...keys.prompt(projectId, promptId), "examples", "results", version] as const,
};

export const promptBase = (projectId: string, promptId: string) =>
  path`/api/dashboard/projects/${projectId}/prompts/${promptId}`;
const examplesPath = (projectId: string, promptId: string) => `${promptBase(projectId, promptId)}/examples`;

export const examplesQuery = (projectId: string, promptId: string) =>
  queryOptions({
    queryKey: exampleKeys.list(projectId, promptId),
    queryFn: () => get<{ examples: Example[] }>(examplesPath(projectId, promptId)),
  });

/** Every kept result of one version (a reference or a hash), newest first. */
export const resultsQuery = (projectId: string, promptId: string, version: string) =>
  queryOptions({
    queryKey: exampleKeys.results(projectId, promptId, version),
    queryFn: () =>
      get<{ version: string; results: ExampleResult[] }>(
        `${examplesPath(projectId, promptId)}/results?${new URLSearchParams({ version }).toString()}`,
      ),
  });

export function useCreateExample(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ExampleBody) => post<Example>(examplesPath(projectId, promptId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: exampleKeys.list(projectId, promptId) }),
  });
}

export function useUpdateExample(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: Partial<ExampleBody> }) =>
      patch<Example>(`${examplesPath(projectId, promptId)}${path`/${id}`}`, body),
    // New inputs drop the example's kept results; the history's counts change with them.
    onSuccess: () => client.invalidateQueries({ queryKey: keys.prompt(projectId, promptId) }),
  });
}

export function useRemoveExample(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      del<{ id: string; removed: true }>(`${examplesPath(projectId, promptId)}${path`/${id}`}`),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.prompt(projectId, promptId) }),
  });
}
