import type { PromptListItem, Promptstore } from "../../src/index.js";
import { CliError } from "../output.js";
import { connect, Progress, type RemoteOptions, remotePrompts, short, talking } from "./connection.js";
import { pullExamples } from "./examples-file.js";
import { otherLabels, readLock, writeLock } from "./lockfile.js";
import { fileHash, type PromptFile, renderPromptFile } from "./prompt-file.js";
import { classify } from "./state.js";
import { readWorkspace, removePromptFile, writePromptFile } from "./workspace.js";

export interface PullResult {
  id: string;
  file: string;
  result: "written" | "unchanged" | "kept local changes" | "removed" | "untracked";
  latest: string | null;
}

/** A version as a file: the server's content, unchanged, with the prompt's name and description. */
export async function fetchPromptFile(
  client: Promptstore,
  prompt: PromptListItem,
  version: string,
): Promise<PromptFile> {
  const view = await client.get(prompt.id, { version, guard: false, cache: false });
  return {
    id: prompt.id,
    name: view.name,
    description: view.description,
    content: {
      sections: view.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled })),
      tools: (view.tools ?? []) as PromptFile["content"]["tools"],
      ...(view.model !== undefined ? { model: view.model as PromptFile["content"]["model"] } : {}),
    },
  };
}

/**
 * Writes every prompt's latest version as a file and records the pointers in the lockfile. Files edited
 * since the lock are kept when the server did not move, and refused (unless `force`) when it did.
 */
export async function pull(dir: string, options: RemoteOptions & { force?: boolean }): Promise<PullResult[]> {
  const client = connect(options);
  const lock = await readLock(dir);
  const local = await readWorkspace(dir);
  const remote = await talking(() => remotePrompts(client));
  const states = classify(local, lock, remote);

  const conflicts = states.filter(
    (s) =>
      s.state === "changed locally and on server" ||
      s.state === "new, but the id exists on the server" ||
      s.state === "changed locally, deleted on server",
  );
  if (conflicts.length > 0 && !options.force) {
    throw new CliError(
      `pull refused: ${conflicts.map((c) => `${c.file} (${c.state})`).join(", ")}; push or set the changes aside first, or pull --force to overwrite them`,
    );
  }

  const results: PullResult[] = [];
  const byId = new Map(states.map((s) => [s.id, s]));
  const progress = new Progress("pull", remote.size);
  for (const prompt of remote.values()) {
    const state = byId.get(prompt.id);
    const file = state?.file ?? `${prompt.id}.md`;
    if (state?.state === "changed locally" && !options.force) {
      // The server has not moved: the edit is the user's, and the lock still says what it started from.
      results.push({ id: prompt.id, file, result: "kept local changes", latest: prompt.latest_version });
    } else if (state?.state === "unchanged") {
      results.push({ id: prompt.id, file, result: "unchanged", latest: prompt.latest_version });
    } else {
      const content = await talking(() => fetchPromptFile(client, prompt, prompt.latest_version));
      await writePromptFile(dir, file, renderPromptFile(content));
      lock.set(prompt.id, {
        file,
        hash: fileHash(content),
        production: prompt.production_version,
        latest: prompt.latest_version,
        name: content.name,
        description: content.description,
        labels: otherLabels(prompt.labels),
      });
      results.push({ id: prompt.id, file, result: "written", latest: prompt.latest_version });
    }
    // The examples travel whatever the prompt file did: they change on their own.
    if (state?.state !== "changed locally" || options.force) await pullExamples(dir, file, prompt.id, options);
    progress.step();
  }
  for (const state of states) {
    if (remote.has(state.id) || !state.entry) continue;
    // Deleted on the server: an untouched file goes with it, an edited one stays (push would recreate it).
    lock.delete(state.id);
    if (state.localChanged) {
      results.push({ id: state.id, file: state.file, result: "untracked", latest: null });
    } else {
      await removePromptFile(dir, state.file);
      results.push({ id: state.id, file: state.file, result: "removed", latest: null });
    }
  }
  await writeLock(dir, lock);
  return results;
}

export function describePull(results: PullResult[]): string {
  const lines = results.map((r) => `${r.result.padEnd(18)} ${r.file}${r.latest ? `  ${short(r.latest)}` : ""}`);
  const written = results.filter((r) => r.result === "written").length;
  lines.push(`${results.length} prompts: ${written} written, ${results.length - written} not rewritten`);
  return lines.join("\n");
}
