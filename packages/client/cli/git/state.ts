import type { PromptListItem } from "../../src/index.js";
import type { Lock, LockEntry } from "./lockfile.js";
import { type LocalPrompt, sameAsLock } from "./workspace.js";

export type FileState =
  | "unchanged"
  | "changed locally"
  | "changed on server"
  | "changed locally and on server"
  | "new"
  | "new, but the id exists on the server"
  | "deleted locally"
  | "deleted on server"
  | "changed locally, deleted on server";

/** Where one prompt stands between its file, the lockfile and (when asked) the server. */
export interface PromptState {
  id: string;
  file: string;
  state: FileState;
  local: LocalPrompt | undefined;
  entry: LockEntry | undefined;
  remote: PromptListItem | undefined;
  /** The file differs from the lock (or has no lock entry). */
  localChanged: boolean;
  /** The server moved since the lock; false when the server was not asked. */
  serverChanged: boolean;
}

function serverMoved(entry: LockEntry, remote: PromptListItem): boolean {
  return (
    remote.latest_version !== entry.latest ||
    remote.production_version !== entry.production ||
    remote.name !== entry.name ||
    remote.description !== entry.description
  );
}

/**
 * Compares files with the lock, offline (hashes are computed locally), and with the server's pointers when
 * `remote` is given (one listing: no request per prompt).
 */
export function classify(
  local: Map<string, LocalPrompt>,
  lock: Lock,
  remote: Map<string, PromptListItem> | undefined,
): PromptState[] {
  const ids = new Set([...local.keys(), ...lock.keys()]);
  const states: PromptState[] = [];
  for (const id of [...ids].sort()) {
    const file = local.get(id);
    const entry = lock.get(id);
    const server = remote?.get(id);
    const localChanged = file !== undefined && !sameAsLock(file, entry);
    let state: FileState;
    let serverChanged = false;
    if (!entry) {
      state = server ? "new, but the id exists on the server" : "new";
    } else if (remote && !server) {
      serverChanged = true;
      state = localChanged ? "changed locally, deleted on server" : "deleted on server";
    } else if (!file) {
      state = "deleted locally";
      serverChanged = server !== undefined && serverMoved(entry, server);
    } else {
      serverChanged = server !== undefined && serverMoved(entry, server);
      state =
        localChanged && serverChanged
          ? "changed locally and on server"
          : localChanged
            ? "changed locally"
            : serverChanged
              ? "changed on server"
              : "unchanged";
    }
    states.push({
      id,
      file: file?.file ?? entry?.file ?? `${id}.md`,
      state,
      local: file,
      entry,
      remote: server,
      localChanged,
      serverChanged,
    });
  }
  return states;
}
