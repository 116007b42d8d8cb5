import type { VersionList } from "@promptstore/core/views";

export type Version = VersionList["versions"][number];

/** Which way publishing a version moves production: forward to a newer one, back to an older one, or not at all. */
export function publishKind(
  versions: readonly Version[],
  production: string | null,
  version: string,
): "publish" | "rollback" | null {
  if (version === production) return null;
  if (production === null) return "publish";
  const index = versions.findIndex((v) => v.version === version);
  const productionIndex = versions.findIndex((v) => v.version === production);
  // Newest first: a smaller index is newer.
  return productionIndex === -1 || index < productionIndex ? "publish" : "rollback";
}
