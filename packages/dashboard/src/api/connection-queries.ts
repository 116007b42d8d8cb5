/**
 * A project's model connections (docs/playground.md, "Model connections"): listed for the playground's model choice, added and
 * edited and removed by owners. The API key is sent when a connection is added (or its key replaced), and never
 * comes back.
 */
import type { ConnectionView } from "@promptstore/core/playground";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, patch, path, post } from "./client";

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

/** What an edit sends: only the fields changed; `api_key: ""` removes the stored key. */
export type UpdateConnectionBody = Partial<AddConnectionBody>;

export function useUpdateConnection(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: UpdateConnectionBody }) =>
      patch<ModelConnection>(`${base(projectId)}${path`/${id}`}`, body),
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
