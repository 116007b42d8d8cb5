/**
 * Includes (docs/includes.md): what a version includes and where its pins stand, what includes a prompt, and
 * updates of pins on purpose. Keyed under the prompt, so whatever refreshes a prompt refreshes these; an update
 * saves (and may publish) other prompts, so it refreshes the project's prompts and releases.
 */
import type { UpdateDependentsBody, UpdateIncludesBody } from "@promptstore/core/schemas";
import type { IncludedBy, IncludesUpdate, PromptIncludes } from "@promptstore/core/views";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { get, path, post } from "./client";
import { keys } from "./queries";

/** One prompt's update, or why it was refused, in an update of several. */
export type DependentResult = IncludesUpdate | { id: string; error: string; status: number };

const promptPath = (projectId: string, promptId: string) =>
  path`/api/dashboard/projects/${projectId}/prompts/${promptId}`;

export const includeKeys = {
  includes: (projectId: string, promptId: string, version: string) =>
    [...keys.prompt(projectId, promptId), "includes", version] as const,
  includedBy: (projectId: string, promptId: string) => [...keys.prompt(projectId, promptId), "included-by"] as const,
};

/** A version's includes (production unless told) beside what their pointers name now. */
export const includesQuery = (projectId: string, promptId: string, version = "production") =>
  queryOptions({
    queryKey: includeKeys.includes(projectId, promptId, version),
    queryFn: () =>
      get<PromptIncludes>(`${promptPath(projectId, promptId)}/includes?version=${encodeURIComponent(version)}`),
  });

/** The versions of other prompts that include this one, what serves them, and whether their pins are behind. */
export const includedByQuery = (projectId: string, promptId: string) =>
  queryOptions({
    queryKey: includeKeys.includedBy(projectId, promptId),
    queryFn: () => get<IncludedBy>(`${promptPath(projectId, promptId)}/included-by`),
  });

function useRefreshAfterUpdate(projectId: string) {
  const client = useQueryClient();
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: keys.prompts(projectId) }),
      client.invalidateQueries({ queryKey: ["projects", projectId, "releases"] }),
    ]);
}

/** Saves the prompt again with its includes re-pinned (and publishes where allowed, when asked). */
export function useUpdateIncludes(projectId: string, promptId: string) {
  const refresh = useRefreshAfterUpdate(projectId);
  return useMutation({
    mutationFn: (body: UpdateIncludesBody) =>
      post<IncludesUpdate>(`${promptPath(projectId, promptId)}/update-includes`, body),
    onSuccess: refresh,
  });
}

/** The same for chosen prompts that include this one, in one action. */
export function useUpdateDependents(projectId: string, promptId: string) {
  const refresh = useRefreshAfterUpdate(projectId);
  return useMutation({
    mutationFn: (body: UpdateDependentsBody) =>
      post<{ id: string; results: DependentResult[] }>(`${promptPath(projectId, promptId)}/included-by/update`, body),
    onSuccess: refresh,
  });
}
