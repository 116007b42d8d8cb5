/**
 * A project's model connections (docs/playground.md, "Model connections"): listed for the playground's model choice, added and
 * removed by owners. The API key is sent once, when a connection is added, and never comes back.
 */
import type { ConnectionView } from "@promptstore/core/playground";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, path, post } from "./client";

export type ModelConnection = ConnectionView;

export interface AddConnectionBody {
  name: string;
  base_url: string;
  api_key?: string;
  models?: string[];
}

export const connectionKeys = {
  list: (projectId: string) => ["projects", projectId, "connections"] as const,
};

const base = (projectId: string) => path`/api/dashboard/projects/${projectId}/connections`;

export const connectionsQuery = (projectId: string) =>
  queryOptions({
    queryKey: connectionKeys.list(projectId),
    queryFn: () => get<{ connections: ModelConnection[] }>(base(projectId)),
  });

export function useAddConnection(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: AddConnectionBody) => post<ModelConnection>(base(projectId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: connectionKeys.list(projectId) }),
  });
}

export function useRemoveConnection(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<{ id: string; removed: true }>(`${base(projectId)}${path`/${id}`}`),
    onSuccess: () => client.invalidateQueries({ queryKey: connectionKeys.list(projectId) }),
  });
}
