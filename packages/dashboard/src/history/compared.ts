import type { VersionList } from "@promptstore/core/views";

/**
 * The two versions the History tab compares: the ones the address names when the prompt has them, else
 * production (or the one before the latest) against the latest. The router asks the same to fetch them early.
 */
export function comparedVersions(list: VersionList, params: URLSearchParams): { from: string | null; to: string } {
  const { versions, production_version: production, latest_version: latest } = list;
  const inList = (hash: string | null) => (hash && versions.some((v) => v.version === hash) ? hash : null);
  const defaultFrom = production && production !== latest ? production : (versions[1]?.version ?? null);
  return { from: inList(params.get("from")) ?? defaultFrom, to: inList(params.get("to")) ?? latest };
}
