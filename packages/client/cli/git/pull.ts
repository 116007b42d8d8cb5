import type { PromptListItem, Promptstore } from "../../src/index.js";
import { CliError } from "../output.js";
import { connect, Progress, type RemoteOptions, remotePrompts, short, talking } from "./connection.js";
import { type DatasetPullResult, describeDatasetPull, planDatasetPull, pullDatasets } from "./datasets.js";
import { pullExamples } from "./examples-file.js";
import { otherLabels, readLock, writeLock } from "./lockfile.js";
import { pinsOfView } from "./pins.js";
import { fileHash, type PromptFile, renderPromptFile } from "./prompt-file.js";
import { classify } from "./state.js";
import { readWorkspace, removePromptFile, writePromptFile } from "./workspace.js";

/** What pull did: per prompt, and per dataset (docs/git.md, "Datasets"). */
export interface PullReport {
  prompts: PullResult[];
  datasets: DatasetPullResult[];
}

export interface PullResult {
  id: string;
  file: string;
  result: "written" | "unchanged" | "kept local changes" | "removed" | "untracked";
  latest: string | null;
}

/**
 * A version as a file: the server's content, unchanged, with the prompt's name and description. A version with
 * includes is written as written (`{{> safety}}`, each section's `source`), never expanded, with its pins.
 */
export async function fetchPromptFile(
  client: Promptstore,
  prompt: PromptListItem,
  version: string,
): Promise<PromptFile> {
  const view = await client.get(prompt.id, { version, guard: false, cache: false });
  const pins = pinsOfView(view);
  return {
    id: prompt.id,
    name: view.name,
    description: view.description,
    content: {
      sections: view.sections.map((s) => ({ title: s.title, content: s.source ?? s.content, enabled: s.enabled })),
      tools: (view.tools ?? []) as PromptFile["content"]["tools"],
      ...(view.model !== undefined ? { model: view.model as PromptFile["content"]["model"] } : {}),
    },
    ...(pins !== undefined ? { pins } : {}),
  };
}

/**
 * Writes every prompt's latest version as a file and records the pointers in the lockfile. Files edited
 * since the lock are kept when the server did not move, and refused (unless `force`) when it did.
 */
export async function pull(dir: string, options: RemoteOptions & { force?: boolean }): Promise<PullReport> {
  const client = connect(options);
  const lock = await readLock(dir);
  const local = await readWorkspace(dir, lock);
  const remote = await talking(() => remotePrompts(client));
  const states = classify(local, lock, remote);
  const datasetPlan = await planDatasetPull(dir, lock, options);

  const conflicts = states.filter(
    (s) =>
      s.state === "changed locally and on server" ||
      s.state === "new, but the id exists on the server" ||
      s.state === "changed locally, deleted on server",
  );
  const refused = [...conflicts.map((c) => `${c.file} (${c.state})`), ...datasetPlan.conflicts];
  if (refused.length > 0 && !options.force) {
    throw new CliError(
      `pull refused: ${refused.join(", ")}; push or set the changes aside first, or pull --force to overwrite them`,
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
        ...(content.pins !== undefined ? { includes: content.pins } : {}),
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
  const datasets = await pullDatasets(dir, lock, datasetPlan, options);
  await writeLock(dir, lock);
  return { prompts: results, datasets };
}

export function describePull(report: PullReport): string {
  const results = report.prompts;
  const lines = results.map((r) => `${r.result.padEnd(18)} ${r.file}${r.latest ? `  ${short(r.latest)}` : ""}`);
  lines.push(...describeDatasetPull(report.datasets));
  const written = results.filter((r) => r.result === "written").length;
  lines.push(`${results.length} prompts: ${written} written, ${results.length - written} not rewritten`);
  if (report.datasets.length > 0) {
    const files = report.datasets.filter((r) => r.result === "written").length;
    lines.push(`${report.datasets.length} datasets: ${files} written, ${report.datasets.length - files} not rewritten`);
  }
  return lines.join("\n");
}
