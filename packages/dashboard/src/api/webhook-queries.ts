/** The webhooks of a project's settings: queries and mutations, keyed under the project like its keys. */
import type {
  CreateWebhookBody,
  DeliveryView,
  UpdateWebhookBody,
  WebhookView,
  WebhookWithSecret,
} from "@promptstore/core/webhooks";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, patch, path, post } from "./client";

export const webhookKeys = {
  list: (projectId: string) => ["projects", projectId, "webhooks"] as const,
  deliveries: (projectId: string, webhookId: string) =>
    ["projects", projectId, "webhooks", webhookId, "deliveries"] as const,
};

const base = (projectId: string) => path`/api/dashboard/projects/${projectId}/webhooks`;
const one = (projectId: string, webhookId: string) => `${base(projectId)}${path`/${webhookId}`}`;

export const webhooksQuery = (projectId: string) =>
  queryOptions({
    queryKey: webhookKeys.list(projectId),
    queryFn: () => get<{ webhooks: WebhookView[] }>(base(projectId)),
  });

export const deliveriesQuery = (projectId: string, webhookId: string) =>
  queryOptions({
    queryKey: webhookKeys.deliveries(projectId, webhookId),
    queryFn: () => get<{ deliveries: DeliveryView[] }>(`${one(projectId, webhookId)}/deliveries?limit=20`),
    // Attempts go on in the background: keep the list current while it is open.
    refetchInterval: 5_000,
  });

export function useCreateWebhook(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateWebhookBody) => post<WebhookWithSecret>(base(projectId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: webhookKeys.list(projectId) }),
  });
}

export function useUpdateWebhook(projectId: string, webhookId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateWebhookBody) => patch<WebhookView>(one(projectId, webhookId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: webhookKeys.list(projectId) }),
  });
}

export function useRotateSecret(projectId: string, webhookId: string) {
  return useMutation({
    mutationFn: () => post<WebhookWithSecret>(`${one(projectId, webhookId)}/rotate-secret`, {}),
  });
}

export function useRemoveWebhook(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (webhookId: string) => del<{ id: string; removed: true }>(one(projectId, webhookId)),
    onSuccess: () => client.invalidateQueries({ queryKey: webhookKeys.list(projectId) }),
  });
}
