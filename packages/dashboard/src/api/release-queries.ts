/**
 * The release path (docs/releases.md): labels moved and rolled out, release requests asked and decided,
 * and the project's label settings. Keyed under the project like its prompts, so a decision that moves a
 * label also refreshes every prompt's views and history.
 */
import type { EvaluationView } from "@promptstore/core/evaluations/evaluations";
import type {
  LabelSettingView as LabelSetting,
  PublishedVersion,
  ReleaseView as Release,
  ReleaseStatus,
  RemovedLabel,
} from "@promptstore/core/views";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, path, post, put } from "./client";
import { keys } from "./queries";

export type { LabelSettingView as LabelSetting, ReleaseStatus, ReleaseView as Release } from "@promptstore/core/views";

export const releaseKeys = {
  releases: (projectId: string, status: ReleaseStatus | "all") => ["projects", projectId, "releases", status] as const,
  allReleases: (projectId: string) => ["projects", projectId, "releases"] as const,
  labels: (projectId: string) => ["projects", projectId, "labels"] as const,
};

const projectPath = (projectId: string) => path`/api/dashboard/projects/${projectId}`;
const promptPath = (projectId: string, promptId: string) => `${projectPath(projectId)}${path`/prompts/${promptId}`}`;

export const releasesQuery = (projectId: string, status: ReleaseStatus | "all") =>
  queryOptions({
    queryKey: releaseKeys.releases(projectId, status),
    queryFn: () =>
      get<{ releases: Release[] }>(`${projectPath(projectId)}/releases${status === "all" ? "" : `?status=${status}`}`),
  });

/**
 * One request, with how its candidate and what the label serves now answered the prompt's saved examples
 * (docs/playground.md, "Where results show"): fetched only where a request is opened, not for the list.
 */
export const releaseQuery = <T>(projectId: string, releaseId: string) =>
  queryOptions({
    // Not under the releases' key: a decision refreshes the list at once, without waiting for every opened
    // request's examples to be read again (they answer the same: results are kept per version).
    queryKey: ["projects", projectId, "release-examples", releaseId] as const,
    staleTime: 60_000,
    queryFn: () => get<T>(`${projectPath(projectId)}${path`/releases/${releaseId}`}`),
  });

export const labelSettingsQuery = (projectId: string) =>
  queryOptions({
    queryKey: releaseKeys.labels(projectId),
    queryFn: () => get<{ labels: LabelSetting[] }>(`${projectPath(projectId)}/labels`),
  });

/** Everything a label move can change: the prompts (views, history, list), the labels in use, the requests. */
function invalidateAfterMove(client: ReturnType<typeof useQueryClient>, projectId: string) {
  // Gate states are read again too, but not waited for: a decision's own callbacks run once the request list
  // has been read again, before the request's item (and its callbacks) leaves the screen.
  void client.invalidateQueries({ queryKey: ["projects", projectId, "gates"] });
  return Promise.all([
    client.invalidateQueries({ queryKey: keys.prompts(projectId) }),
    client.invalidateQueries({ queryKey: releaseKeys.labels(projectId) }),
    client.invalidateQueries({ queryKey: releaseKeys.allReleases(projectId) }),
  ]);
}

export interface LabelMoveBody {
  version: string;
  label: string;
  /** 1–99 starts or changes a rollout; 100 or none moves the label. */
  percent?: number | undefined;
}

/** Moves a label (or starts, changes, completes, aborts a rollout on it): an unprotected one only. */
export function useMoveLabel(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: LabelMoveBody) => post<PublishedVersion>(`${promptPath(projectId, promptId)}/publish`, body),
    onSuccess: () => invalidateAfterMove(client, projectId),
  });
}

export function useRemoveLabel(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (label: string) => del<RemovedLabel>(`${promptPath(projectId, promptId)}${path`/labels/${label}`}`),
    onSuccess: () => invalidateAfterMove(client, projectId),
  });
}

export interface ReleaseRequestBody extends LabelMoveBody {
  message?: string | undefined;
}

/** Asks for a protected label to move: a pending request an owner other than the asker decides. */
export function useRequestRelease(projectId: string, promptId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ReleaseRequestBody) => post<Release>(`${promptPath(projectId, promptId)}/releases`, body),
    onSuccess: () => client.invalidateQueries({ queryKey: releaseKeys.allReleases(projectId) }),
  });
}

/** Approves or rejects a pending request; an approval moves the label (or finds it moved: stale). */
export function useDecideRelease(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, approve, comment }: { id: string; approve: boolean; comment?: string | undefined }) =>
      post<Release>(
        `${projectPath(projectId)}${path`/releases/${id}`}/${approve ? "approve" : "reject"}`,
        comment ? { comment } : {},
      ),
    onSuccess: () => invalidateAfterMove(client, projectId),
    // A refusal may be the gate's: read where the candidate stands again.
    onError: () => client.invalidateQueries({ queryKey: gateKeys.all(projectId) }),
  });
}

export interface LabelSettingsBody {
  description?: string;
  protected?: boolean;
  fallback?: string | null;
  /** What a version must pass before the label points to it, or null for none (docs/evaluations.md). */
  required_evaluation?: unknown;
  rollback_allowed?: boolean;
}

export function useConfigureLabel(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ name, body }: { name: string; body: LabelSettingsBody }) =>
      put<LabelSetting>(`${projectPath(projectId)}${path`/labels/${name}`}`, body),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: releaseKeys.labels(projectId) }),
        client.invalidateQueries({ queryKey: keys.audit(projectId) }),
        client.invalidateQueries({ queryKey: ["projects", projectId, "gates"] }),
      ]),
  });
}

/** Where a version stands against its label's required evaluation (docs/evaluations.md, "The gate"). */
export interface GateView {
  label: string;
  version: string;
  required: boolean;
  state?: "passed" | "failed" | "stale" | "not_evaluated";
  reason?: string;
  evaluation?: string | null;
  pass_rate?: number | null;
  rollback?: true;
}

export const gateKeys = {
  all: (projectId: string) => ["projects", projectId, "gates"] as const,
  one: (projectId: string, promptId: string, label: string, version: string) =>
    ["projects", projectId, "gates", promptId, label, version] as const,
};

export const gateQuery = (projectId: string, promptId: string, label: string, version: string) =>
  queryOptions({
    queryKey: gateKeys.one(projectId, promptId, label, version),
    queryFn: () =>
      get<GateView>(
        `${promptPath(projectId, promptId)}${path`/labels/${label}`}/gate?version=${encodeURIComponent(version)}`,
      ),
  });

/** Runs the label's required evaluation of a version: 202 running, or 200 when it was already done (reused). */
export function useRunRequired(projectId: string, promptId: string, label: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (version: string) =>
      post<EvaluationView>(`${promptPath(projectId, promptId)}${path`/labels/${label}`}/evaluations`, { version }),
    onSuccess: (view) => {
      client.setQueryData(["projects", projectId, "evaluations", view.id], view);
      return client.invalidateQueries({ queryKey: gateKeys.all(projectId) });
    },
  });
}
