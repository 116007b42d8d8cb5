/** MCP sign-in: the consent screen's request, and Settings → Connected apps. */

import type { ConsentView, GrantView } from "@promptstore/core/accounts/connected-apps";
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, path, post } from "./client";

export type { ConsentView, GrantView };

export const oauthKeys = {
  request: (id: string) => ["oauth", "request", id] as const,
  grants: (orgId: string | null) => ["oauth", "grants", orgId ?? "mine"] as const,
};

export const consentQuery = (requestId: string) =>
  queryOptions({
    queryKey: oauthKeys.request(requestId),
    queryFn: () => get<ConsentView>(path`/api/dashboard/oauth/requests/${requestId}`),
    retry: false,
  });

export type ConsentAnswer = { decision: "deny" } | { decision: "allow"; project_id: string; scope: KeyScope };

/** The answer gives where the browser goes next: the client's redirect URI, with a code or with access_denied. */
export function useAnswerConsent(requestId: string) {
  return useMutation({
    mutationFn: (answer: ConsentAnswer) =>
      post<{ redirect_to: string }>(path`/api/dashboard/oauth/requests/${requestId}`, answer),
  });
}

/** The signed-in person's grants (orgId null), or an organization's (its owners). */
export const grantsQuery = (orgId: string | null) =>
  queryOptions({
    queryKey: oauthKeys.grants(orgId),
    queryFn: () =>
      get<{ grants: GrantView[] }>(
        orgId === null ? "/api/dashboard/oauth/grants" : `/api/dashboard/oauth/grants?org=${encodeURIComponent(orgId)}`,
      ),
  });

export function useRevokeGrant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<{ revoked: true }>(path`/api/dashboard/oauth/grants/${id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ["oauth", "grants"] }),
  });
}
