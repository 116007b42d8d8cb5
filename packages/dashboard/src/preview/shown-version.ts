import type { VersionList } from "@promptstore/core/views";

/**
 * The version and guard the Preview tab shows: the ones the address names when usable, else production as
 * applications read it (latest while nothing is published), with the guard. The router asks the same to
 * fetch it early.
 */
export function shownVersion(list: VersionList, params: URLSearchParams): { version: string; guard: boolean } {
  const requested = params.get("version");
  const usable =
    requested === "latest" ||
    (requested === "production" && list.production_version !== null) ||
    list.versions.some((v) => v.version === requested);
  const version = requested && usable ? requested : list.production_version ? "production" : "latest";
  return { version, guard: params.get("guard") !== "false" };
}
