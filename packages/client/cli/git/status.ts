import { connect, type RemoteOptions, remotePrompts, talking } from "./connection.js";
import { type DatasetStatusRow, datasetStatus } from "./datasets.js";
import { readLock } from "./lockfile.js";
import { classify, type PromptState } from "./state.js";
import { readWorkspace } from "./workspace.js";

export interface StatusRow {
  id: string;
  file: string;
  state: PromptState["state"];
  /** The hash of the file, computed locally; null when the file is gone. */
  local: string | null;
  lock: { hash: string; production: string | null; latest: string } | null;
  server: { production: string | null; latest: string } | null;
}

/**
 * Per file: unchanged, changed locally, changed on the server since the lock, new. Hashes are computed
 * offline; the server is asked once for its pointers (a listing, not a request per prompt), not at all
 * with `offline`.
 */
export interface StatusReport {
  prompts: StatusRow[];
  datasets: DatasetStatusRow[];
}

export async function status(dir: string, options: RemoteOptions & { offline?: boolean }): Promise<StatusReport> {
  const lock = await readLock(dir);
  const local = await readWorkspace(dir, lock);
  const remote = options.offline
    ? undefined
    : await talking(() => {
        const client = connect(options);
        return remotePrompts(client);
      });
  const prompts = classify(local, lock, remote).map((s) => ({
    id: s.id,
    file: s.file,
    state: s.state,
    local: s.local?.hash ?? null,
    lock: s.entry ? { hash: s.entry.hash, production: s.entry.production, latest: s.entry.latest } : null,
    server: s.remote ? { production: s.remote.production_version, latest: s.remote.latest_version } : null,
  }));
  return { prompts, datasets: await datasetStatus(dir, lock, options) };
}

const MARK: Record<PromptState["state"] | DatasetStatusRow["state"], string> = {
  unchanged: " ",
  "changed locally": "M",
  "changed on server": "S",
  "changed locally and on server": "C",
  new: "A",
  "new, but the id exists on the server": "C",
  "deleted locally": "D",
  "deleted on server": "S",
  "changed locally, deleted on server": "C",
  "new, but the name exists on the server": "C",
};

export function describeStatus(report: StatusReport): string {
  const rows: { file: string; state: PromptState["state"] | DatasetStatusRow["state"] }[] = [
    ...report.prompts,
    ...report.datasets,
  ];
  if (rows.length === 0) return "no prompt files and no lockfile here";
  return rows.map((r) => `${MARK[r.state]} ${r.file.padEnd(32)} ${r.state}`).join("\n");
}
