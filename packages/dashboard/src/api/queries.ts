import { HASH_OR_PREFIX } from "@promptstore/core/version-ref";

/**
 * Every query and mutation of the dashboard, keyed by resource. Mutations invalidate the keys of what
 * they change; a key is a prefix of the narrower ones, so invalidating a project's prompts also
 * refreshes each prompt's views and version list.
 */

import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { AuditPage } from "@promptstore/core/audit";
import type {
  ApiKeyView,
  ChangePasswordBody,
  DashboardPromptPage,
  MemberView,
  ProjectSummary,
  Role,
  SessionView,
  SignInBody,
  UsageView,
} from "@promptstore/core/dashboard";
import type { CreatePromptBody, SaveVersionBody } from "@promptstore/core/schemas";
import type {
  CreatedPrompt,
  DeletedPrompt,
  PromptView,
  PublishedVersion,
  SavedVersion,
  VersionList,
} from "@promptstore/core/views";
import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiError, del, get, patch, path, post, put, setCsrfToken } from "./client";

export const keys = {
  session: ["session"] as const,
  prompts: (projectId: string) => ["projects", projectId, "prompts"] as const,
  /**
   * Every page of the list, under the project's prompts (so whatever refreshes those refreshes them) but
   * apart from each prompt's views: an object where those hold a prompt's id, so this prefix matches the
   * pages alone.
   */
  promptPages: (projectId: string) => ["projects", projectId, "prompts", { list: "pages" }] as const,
  promptPage: (projectId: string, q: string, page: number, perPage: number) =>
    ["projects", projectId, "prompts", { list: "pages", q, page, per_page: perPage }] as const,
  prompt: (projectId: string, promptId: string) => ["projects", projectId, "prompts", promptId] as const,
  promptView: (projectId: string, promptId: string, version: string, guard: boolean) =>
    ["projects", projectId, "prompts", promptId, "view", version, guard] as const,
  versions: (projectId: string, promptId: string) => ["projects", projectId, "prompts", promptId, "versions"] as const,
  apiKeys: (projectId: string) => ["projects", projectId, "keys"] as const,
  audit: (projectId: string) => ["projects", projectId, "audit"] as const,
  members: (orgId: string) => ["orgs", orgId, "members"] as const,
  usage: (orgId: string) => ["orgs", orgId, "usage"] as const,
};

const projectPath = (projectId: string) => path`/api/dashboard/projects/${projectId}`;
const promptPath = (projectId: string, promptId: string) => `${projectPath(projectId)}${path`/prompts/${promptId}`}`;
const orgPath = (orgId: string) => path`/api/dashboard/orgs/${orgId}`;

export function remember(session: SessionView): SessionView {
  setCsrfToken(session.csrf_token);
  return session;
}

/** The signed-in session, or null: a 401 here is the ordinary answer "not signed in", not an error. */
export const sessionQuery = queryOptions({
  queryKey: keys.session,
  queryFn: async (): Promise<SessionView | null> => {
    try {
      return remember(await get<SessionView>("/api/dashboard/session"));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        setCsrfToken(null);
        return null;
      }
      throw error;
    }
  },
  staleTime: 5 * 60_000,
});

/** One page of one search of the list: the request itself, which the app's first load sends early (prefetch.ts). */
export const fetchPromptPage = (projectId: string, q: string, page: number, perPage: number, signal?: AbortSignal) =>
  get<DashboardPromptPage>(
    `${projectPath(projectId)}/prompts?${new URLSearchParams({ q, page: String(page), per_page: String(perPage) }).toString()}`,
    signal,
  );

/**
 * One page of the list among the prompts whose name or id holds `q` ("" for all), searched and counted by the
 * server (core's `matchesSearch`): a project of 100 000 prompts is 40 MB as a whole list. It takes the query's
 * signal: a search the screen moved on from (the next search, another page) is cancelled once nothing shows it,
 * and its request closed, so the server stops reading every name for it.
 */
export const promptPageQuery = (projectId: string, q: string, page: number, perPage: number) =>
  queryOptions({
    queryKey: keys.promptPage(projectId, q, page, perPage),
    queryFn: ({ signal }) => fetchPromptPage(projectId, q, page, perPage, signal),
  });

export const promptViewQuery = (projectId: string, promptId: string, version: string, guard: boolean) =>
  queryOptions({
    queryKey: keys.promptView(projectId, promptId, version, guard),
    queryFn: () =>
      get<PromptView>(
        `${promptPath(projectId, promptId)}?${new URLSearchParams({ version, guard: String(guard) }).toString()}`,
      ),
    // A version hash names immutable content; only the pointers move.
    staleTime: HASH_OR_PREFIX.test(version) ? Number.POSITIVE_INFINITY : 30_000,
  });

export const versionsQuery = (projectId: string, promptId: string) =>
  queryOptions({
    queryKey: keys.versions(projectId, promptId),
    queryFn: () => get<VersionList>(`${promptPath(projectId, promptId)}/versions`),
  });

export const apiKeysQuery = (projectId: string) =>
  queryOptions({
    queryKey: keys.apiKeys(projectId),
    queryFn: () => get<{ keys: ApiKeyView[] }>(`${projectPath(projectId)}/keys`),
  });

/** The project's audit trail, newest first, a page at a time. */
export const auditQuery = (projectId: string) =>
  infiniteQueryOptions({
    queryKey: keys.audit(projectId),
    queryFn: ({ pageParam }) =>
      get<AuditPage>(
        `${projectPath(projectId)}/audit?limit=25${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ""}`,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
  });

export const membersQuery = (orgId: string) =>
  queryOptions({
    queryKey: keys.members(orgId),
    queryFn: () => get<{ members: MemberView[] }>(`${orgPath(orgId)}/members`),
  });

export const usageQuery = (orgId: string) =>
  queryOptions({
    queryKey: keys.usage(orgId),
    queryFn: () => get<UsageView>(`${orgPath(orgId)}/usage`),
    // The rate-limit window is a minute: keep the meter roughly current while the page is open.
    refetchInterval: 15_000,
  });

/** Mutations whose 401 is an answer for the form (wrong password), not an expired session. */
export const OWN_401 = { handles401: true } as const;

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SignInBody) => post<SessionView>("/api/dashboard/session", body),
    meta: OWN_401,
    onSuccess: (session) => {
      // Another user may have been signed in in this tab before: nothing of theirs may show.
      client.removeQueries({ predicate: (q) => q.queryKey[0] !== "session" });
      client.setQueryData(keys.session, remember(session));
    },
  });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => del<{ signed_out: true }>("/api/dashboard/session"),
    meta: OWN_401,
    // Signed out either way: a 401 means the session had already ended.
    onSettled: () => {
      setCsrfToken(null);
      client.removeQueries({ predicate: (q) => q.queryKey[0] !== "session" });
      client.setQueryData(keys.session, null);
    },
  });
}

export function useChangePassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ChangePasswordBody) => post<SessionView>("/api/dashboard/password", body),
    meta: OWN_401,
    onSuccess: (session) => client.setQueryData(keys.session, remember(session)),
  });
}

export function useCreateProject() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ orgId, name }: { orgId: string; name: string }) =>
      post<ProjectSummary>(`${orgPath(orgId)}/projects`, { name }),
    onSuccess: (_project, { orgId }) =>
      Promise.all([
        client.invalidateQueries({ queryKey: keys.session }),
        client.invalidateQueries({ queryKey: keys.usage(orgId) }),
      ]),
  });
}

export function useCreatePrompt(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CreatePromptBody) => post<CreatedPrompt>(`${projectPath(projectId)}/prompts`, body),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.prompts(projectId) }),
  });
}

export function useSaveVersion(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SaveVersionBody) => put<SavedVersion>(promptPath(projectId, promptId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.prompts(projectId) }),
  });
}

export function usePublish(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (version: string) => post<PublishedVersion>(`${promptPath(projectId, promptId)}/publish`, { version }),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.prompts(projectId) }),
  });
}

/**
 * Deletes a prompt with all its versions. Everything held of it is forgotten (its views and history), so
 * nothing of it can show again from memory; the list is read again.
 */
export function useDeletePrompt(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (promptId: string) => del<DeletedPrompt>(promptPath(projectId, promptId)),
    onSuccess: (deleted) => {
      client.removeQueries({ queryKey: keys.prompt(projectId, deleted.id) });
      return client.invalidateQueries({ queryKey: keys.promptPages(projectId) });
    },
  });
}

export function useCreateKey(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (scope: KeyScope) => post<ApiKeyView & { key: string }>(`${projectPath(projectId)}/keys`, { scope }),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keys.apiKeys(projectId) }),
        client.invalidateQueries({ queryKey: keys.audit(projectId) }),
      ]),
  });
}

export function useRevokeKey(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (keyId: string) => del<ApiKeyView>(`${projectPath(projectId)}${path`/keys/${keyId}`}`),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keys.apiKeys(projectId) }),
        client.invalidateQueries({ queryKey: keys.audit(projectId) }),
      ]),
  });
}

export function useChangeRole(orgId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, role }: { userId: string; role: Role }) =>
      patch<MemberView>(`${orgPath(orgId)}${path`/members/${userId}`}`, { role }),
    // The signed-in user may have changed their own role: the session lists it.
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keys.members(orgId) }),
        client.invalidateQueries({ queryKey: keys.session }),
      ]),
  });
}

export function useRemoveMember(orgId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => del<{ removed: true }>(`${orgPath(orgId)}${path`/members/${userId}`}`),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keys.members(orgId) }),
        client.invalidateQueries({ queryKey: keys.session }),
      ]),
  });
}

/** A client this server hands out under /sdk/, as GET /sdk/ lists it. */
export interface SdkFile {
  language: string;
  version: string;
  file: string;
}

/**
 * The clients this server hands out (GET /sdk/, outside the dashboard's API: a plain JSON listing, no
 * envelope). The preview's snippets install them from here; an empty list when none was built.
 */
export const sdkQuery = queryOptions({
  queryKey: ["sdk"] as const,
  queryFn: async (): Promise<SdkFile[]> => {
    const response = await fetch("/sdk/", { headers: { accept: "application/json" } });
    if (!response.ok) return [];
    const listing = (await response.json()) as { clients?: SdkFile[] };
    return listing.clients ?? [];
  },
  staleTime: Number.POSITIVE_INFINITY,
});
