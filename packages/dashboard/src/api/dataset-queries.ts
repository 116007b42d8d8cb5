/**
 * A project's datasets (docs/evaluations.md, "Datasets"): listed, read at a version a page of cases at a
 * time, created (from cases, a file streamed to the server, or a prompt's saved examples), saved as new
 * versions (replaced, appended, imported), renamed and deleted. Keyed under the project; every change refreshes
 * the dataset's reads and the list.
 */
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import type {
  CasePage,
  CreatedDataset,
  DatasetListItem,
  DatasetVersionView,
  DatasetView,
  SavedDataset,
} from "@promptstore/core/evaluations/dataset-views";
import { isFullHash } from "@promptstore/core/version-ref";
import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { del, get, patch, path, post, postRaw, put } from "./client";

export type {
  CasePage,
  CaseView,
  DatasetListItem,
  DatasetVersionView,
  DatasetView,
} from "@promptstore/core/evaluations/dataset-views";

/** The two formats an import takes, by the content type the server reads them by. */
export type FileFormat = "jsonl" | "csv";
export const CONTENT_TYPE: Record<FileFormat, string> = { jsonl: "application/x-ndjson", csv: "text/csv" };

export const datasetKeys = {
  all: (projectId: string) => ["projects", projectId, "datasets"] as const,
  list: (projectId: string) => ["projects", projectId, "datasets", { list: true }] as const,
  one: (projectId: string, id: string) => ["projects", projectId, "datasets", id] as const,
  view: (projectId: string, id: string, version: string) =>
    ["projects", projectId, "datasets", id, "view", version] as const,
  versions: (projectId: string, id: string) => ["projects", projectId, "datasets", id, "versions"] as const,
  cases: (projectId: string, id: string, version: string, after: number, limit: number) =>
    ["projects", projectId, "datasets", id, "cases", version, after, limit] as const,
};

const base = (projectId: string) => path`/api/dashboard/projects/${projectId}/datasets`;
export const datasetPath = (projectId: string, id: string) => `${base(projectId)}${path`/${id}`}`;
const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== "") search.set(name, String(value));
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
};

/** A full hash names content that never changes; "" (the head) moves. */
const staleFor = (version: string) => (isFullHash(version) ? Number.POSITIVE_INFINITY : 30_000);

export const datasetsQuery = (projectId: string) =>
  queryOptions({
    queryKey: datasetKeys.list(projectId),
    queryFn: () => get<{ datasets: DatasetListItem[] }>(base(projectId)),
  });

/** The dataset at `version` (a hash), or its head (""). */
export const datasetQuery = (projectId: string, id: string, version = "") =>
  queryOptions({
    queryKey: datasetKeys.view(projectId, id, version),
    queryFn: () => get<DatasetView>(`${datasetPath(projectId, id)}${query({ version })}`),
    staleTime: staleFor(version),
  });

export const datasetVersionsQuery = (projectId: string, id: string) =>
  queryOptions({
    queryKey: datasetKeys.versions(projectId, id),
    queryFn: () =>
      get<{ id: string; head: string; versions: DatasetVersionView[] }>(`${datasetPath(projectId, id)}/versions`),
  });

/** One page of a version's cases: those after position `after` (-1 for the first). */
export function fetchCases(
  projectId: string,
  id: string,
  version: string,
  after: number,
  limit: number,
  signal?: AbortSignal,
) {
  return get<CasePage>(
    `${datasetPath(projectId, id)}/cases${query({ version, after: after < 0 ? undefined : after, limit })}`,
    signal,
  );
}

export const casesQuery = (projectId: string, id: string, version: string, after: number, limit: number) =>
  queryOptions({
    queryKey: datasetKeys.cases(projectId, id, version, after, limit),
    queryFn: ({ signal }) => fetchCases(projectId, id, version, after, limit, signal),
    staleTime: staleFor(version),
  });

/** The address that downloads a version as JSONL (a plain GET with the session's cookie). */
export const exportHref = (projectId: string, id: string, version?: string) =>
  `${datasetPath(projectId, id)}/export${query({ version })}`;

function useRefresh(projectId: string) {
  const client = useQueryClient();
  return (id?: string) =>
    Promise.all([
      client.invalidateQueries({ queryKey: datasetKeys.list(projectId) }),
      id === undefined ? null : client.invalidateQueries({ queryKey: datasetKeys.one(projectId, id) }),
    ]);
}

export interface CreateDatasetInput {
  name: string;
  description?: string;
  /** Exactly one source. */
  source:
    | { kind: "cases"; cases: NormalCase[] }
    | { kind: "file"; file: Blob | string; format: FileFormat }
    | { kind: "examples"; promptId: string };
}

export function useCreateDataset(projectId: string) {
  const refresh = useRefresh(projectId);
  return useMutation({
    mutationFn: ({ name, description, source }: CreateDatasetInput): Promise<CreatedDataset> => {
      const described = description ? { description } : {};
      if (source.kind === "file") {
        return postRaw<CreatedDataset>(`${base(projectId)}/import${query({ name, ...described })}`, {
          raw: source.file,
          type: CONTENT_TYPE[source.format],
        });
      }
      return post<CreatedDataset>(base(projectId), {
        name,
        ...described,
        ...(source.kind === "cases" ? { cases: source.cases } : { from_examples: source.promptId }),
      });
    },
    onSuccess: () => refresh(),
  });
}

/** A new version: the head's cases, then these. */
export function useAppendCases(projectId: string, id: string) {
  const refresh = useRefresh(projectId);
  return useMutation({
    mutationFn: (body: { cases: NormalCase[]; base: string; message?: string }) =>
      post<SavedDataset>(`${datasetPath(projectId, id)}/cases`, body),
    onSuccess: () => refresh(id),
  });
}

/** A file (or JSONL built here) streamed into a new version: replacing the cases, or after the head's. */
export function useImportInto(projectId: string, id: string) {
  const refresh = useRefresh(projectId);
  return useMutation({
    mutationFn: (input: {
      file: Blob | string;
      format: FileFormat;
      mode: "replace" | "append";
      base: string;
      message?: string;
    }) =>
      postRaw<SavedDataset>(
        `${datasetPath(projectId, id)}/import${query({ mode: input.mode, base: input.base, message: input.message })}`,
        { raw: input.file, type: CONTENT_TYPE[input.format] },
      ),
    onSuccess: () => refresh(id),
  });
}

export function useUpdateDataset(projectId: string, id: string) {
  const refresh = useRefresh(projectId);
  return useMutation({
    mutationFn: (body: { name?: string; description?: string | null }) =>
      patch<DatasetListItem>(datasetPath(projectId, id), body),
    onSuccess: () => refresh(id),
  });
}

export function useDeleteDataset(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<{ id: string; deleted: true }>(datasetPath(projectId, id)),
    onSuccess: ({ id }) => {
      client.removeQueries({ queryKey: datasetKeys.one(projectId, id) });
      return client.invalidateQueries({ queryKey: datasetKeys.list(projectId) });
    },
  });
}

/** Every case of a version, in order, read a page at a time (a page holds at most 1000, or 4 MiB). */
export async function readAllCases(projectId: string, id: string, version: string, signal?: AbortSignal) {
  const cases: CasePage["cases"] = [];
  let after = -1;
  for (;;) {
    const page = await fetchCases(projectId, id, version, after, 1000, signal);
    cases.push(...page.cases);
    if (page.next_after === null) return cases;
    after = page.next_after;
  }
}

/**
 * A new version made from the head's cases by `change` (an edit, a removal): the whole list is sent, in one PUT
 * when it fits one request (1000 cases), else as JSONL through the import, which takes any size in one version.
 * Both are guarded by the head read (`base`): a colleague's save in between is a 409, not overwritten.
 */
export function useRewriteCases(projectId: string, id: string) {
  const refresh = useRefresh(projectId);
  return useMutation({
    mutationFn: async (input: { head: string; change: (cases: NormalCase[]) => NormalCase[]; message?: string }) => {
      const current = (await readAllCases(projectId, id, input.head)).map((c) => c.case);
      const cases = input.change(current);
      const message = input.message ? { message: input.message } : {};
      if (cases.length <= 1000) {
        return put<SavedDataset>(datasetPath(projectId, id), { cases, base: input.head, ...message });
      }
      const file = new Blob(
        cases.map((c) => `${JSON.stringify(c)}\n`),
        { type: CONTENT_TYPE.jsonl },
      );
      return postRaw<SavedDataset>(
        `${datasetPath(projectId, id)}/import${query({ mode: "replace", base: input.head, ...message })}`,
        { raw: file, type: CONTENT_TYPE.jsonl },
      );
    },
    onSuccess: () => refresh(id),
  });
}
