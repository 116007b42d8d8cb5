import { shortHash } from "@promptstore/core/version-ref";
import { connect, type RemoteOptions, remotePrompts, talking } from "./connection.js";
import { readLock } from "./lockfile.js";

export interface CheckDifference {
  id: string;
  /** Production as the lockfile records it; null when not published, undefined when not in the lockfile. */
  lock: string | null | undefined;
  /** Production on the server; undefined when the prompt is not on the server. */
  server: string | null | undefined;
}

/**
 * Whether what the server serves as production is exactly what the lockfile says, for every prompt on
 * either side. A prompt on the server that the lockfile does not know counts as a difference too: CI
 * guards everything production serves.
 */
export async function check(dir: string, options: RemoteOptions): Promise<CheckDifference[]> {
  const lock = await readLock(dir);
  const remote = await talking(() => remotePrompts(connect(options)));
  const differences: CheckDifference[] = [];
  for (const id of [...new Set([...lock.keys(), ...remote.keys()])].sort()) {
    const locked = lock.get(id);
    const server = remote.get(id);
    const lockProduction = locked ? locked.production : undefined;
    const serverProduction = server ? server.production_version : undefined;
    if (lockProduction !== serverProduction) differences.push({ id, lock: lockProduction, server: serverProduction });
  }
  return differences;
}

export function describeCheck(differences: CheckDifference[]): string {
  const name = (hash: string | null | undefined, where: string) =>
    hash === undefined ? `not in ${where}` : hash === null ? "unpublished" : shortHash(hash);
  return differences
    .map(
      (d) =>
        `${d.id}: production on the server is ${name(d.server, "the server")}, the lockfile says ${name(d.lock, "the lockfile")}`,
    )
    .join("\n");
}
