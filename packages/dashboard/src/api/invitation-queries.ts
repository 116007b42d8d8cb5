/** Invitations: the owners' list on the members screen, and the invitee's page that accepts one. */
import type {
  CreatedInvitation,
  InvitationPreview,
  InvitationView,
  Role,
  SessionView,
} from "@promptstore/core/dashboard";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, path, post } from "./client";
import { keys, remember } from "./queries";

export const invitationKeys = {
  list: (orgId: string) => ["orgs", orgId, "invitations"] as const,
  preview: (token: string) => ["invitation", token] as const,
};

const base = (orgId: string) => path`/api/dashboard/orgs/${orgId}/invitations`;

export const invitationsQuery = (orgId: string) =>
  queryOptions({
    queryKey: invitationKeys.list(orgId),
    queryFn: () => get<{ invitations: InvitationView[] }>(base(orgId)),
  });

export function useInvite(orgId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { email: string; role: Role }) => post<CreatedInvitation>(base(orgId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: invitationKeys.list(orgId) }),
  });
}

export function useRevokeInvitation(orgId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<InvitationView>(`${base(orgId)}${path`/${id}`}`),
    onSuccess: () => client.invalidateQueries({ queryKey: invitationKeys.list(orgId) }),
  });
}

/** What the link offers; the token is posted, never put in a URL the server sees. */
export const invitationPreviewQuery = (token: string) =>
  queryOptions({
    queryKey: invitationKeys.preview(token),
    queryFn: () => post<InvitationPreview>("/api/dashboard/invitations/preview", { token }),
    retry: false,
  });

/** Joining ends with the session listing the new organization. */
export function useAcceptInvitation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (token: string) => post<SessionView>("/api/dashboard/invitations/accept", { token }),
    onSuccess: (session) => client.setQueryData(keys.session, remember(session)),
  });
}
