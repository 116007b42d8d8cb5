import { stat } from "node:fs/promises";
import { type ModelSettings as ApiModelSettings, type Tool as ApiTool, PromptstoreError } from "../../src/index.js";
import { CliError } from "../output.js";
import { connect, Progress, type RemoteOptions, remotePrompts, short, talking } from "./connection.js";
import { readDatasets } from "./dataset-file.js";
import { type DatasetPushResult, describeDatasetPush, planDatasetPush, pushDatasets } from "./datasets.js";
import { pushExamples } from "./examples-file.js";
import { otherLabels, readLock, writeLock } from "./lockfile.js";
import { serverPins, writtenReferences } from "./pins.js";
import { versionContent } from "./prompt-file.js";
import { classify, type PromptState } from "./state.js";
import { readWorkspace } from "./workspace.js";

export interface PushOptions extends RemoteOptions {
  /** true (production) or a label's name: what each pushed file's version is published to. */
  publish?: boolean | string;
  message?: string;
  force?: boolean;
}

/** What push did: per prompt, and per dataset (docs/git.md, "Datasets"). */
export interface PushReport {
  prompts: PushResult[];
  datasets: DatasetPushResult[];
}

export interface PushResult {
  id: string;
  file: string;
  /** created: a new prompt; saved: a new version; unchanged: nothing new (also content equal to an older version). */
  result: "created" | "saved" | "unchanged" | "skipped";
  version: string | null;
  published: boolean;
  note?: string;
}

const CONFLICTS = new Set<PromptState["state"]>([
  "changed locally and on server",
  "new, but the id exists on the server",
  "changed locally, deleted on server",
  // An unedited file does not bring back a prompt someone deleted.
  "deleted on server",
]);

/**
 * What push refuses to act on without `--force`. Publishing also refuses a prompt whose server side moved
 * since the lock: its file would put back into production what someone else has since replaced.
 */
function isConflict(s: PromptState, publish: boolean): boolean {
  if (CONFLICTS.has(s.state)) return true;
  return publish && s.state === "changed on server" && s.remote?.production_version !== s.local?.hash;
}

function conflictLine(s: PromptState): string {
  if (s.state === "new, but the id exists on the server")
    return `${s.id} (${s.file}): a prompt with this id exists on the server and is not in the lockfile`;
  if (s.state === "changed locally, deleted on server" || s.state === "deleted on server")
    return `${s.id} (${s.file}): deleted on the server since the lock`;
  if (s.state === "changed on server")
    return `${s.id} (${s.file}): production moved on the server since the lock (${short(s.entry?.production)} → ${short(s.remote?.production_version)}); publishing the file would replace it`;
  return `${s.id} (${s.file}): latest moved on the server since the lock (${short(s.entry?.latest)} → ${short(s.remote?.latest_version)})`;
}

async function noPromptFiles(dir: string): Promise<string> {
  const exists = await stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
  return exists
    ? `${dir} holds no prompt files (*.md with front matter); promptstore pull ${dir} writes them`
    : `${dir}: no such directory, so it holds no prompt files; check the path, or promptstore pull ${dir} first`;
}

/**
 * Saves a version for each file changed since the lock and creates the prompts that do not exist. Nothing is
 * sent when a prompt moved on the server since the lock, unless `force`; the lock's latest is also sent as
 * `base_version`, so a change that lands between the check and the save is refused by the server too.
 */
export async function push(dir: string, options: PushOptions): Promise<PushReport> {
  const client = connect(options);
  const lock = await readLock(dir);
  const local = await readWorkspace(dir, lock);
  // A misspelled directory must not pass as a push of nothing (nor get a lockfile written into it).
  const localDatasets = await readDatasets(dir);
  if (local.size === 0 && localDatasets.size === 0) throw new CliError(await noPromptFiles(dir));
  const remote = await talking(() => remotePrompts(client));
  const states = classify(local, lock, remote);
  const conflicts = states.filter((s) => isConflict(s, options.publish === true || options.publish === "production"));
  const datasetPlan = await planDatasetPush(localDatasets, lock, options);
  const refused = [...conflicts.map(conflictLine), ...datasetPlan.conflicts];
  if (refused.length > 0 && !options.force) {
    throw new CliError(
      `push refused, nothing was sent: ${refused.join("; ")}. Pull first, or push --force to save over it`,
    );
  }

  const results: PushResult[] = [];
  let datasets: DatasetPushResult[] = [];
  const progress = new Progress("push", states.length);
  try {
    // Datasets first: a prompt pushed with --publish may be gated on an evaluation over one of them.
    datasets = await pushDatasets(dir, lock, datasetPlan, options);
    for (const state of states) {
      const result = await pushOne(client, state, options, lock);
      results.push(result);
      // The examples file beside it, once the prompt exists on the server.
      if (lock.has(state.id)) await pushExamples(dir, state.file, state.id, options);
      progress.step();
    }
  } finally {
    // What was pushed before a failure is recorded: the next push does not send it again.
    await writeLock(dir, lock);
  }
  return { prompts: results, datasets };
}

async function pushOne(
  client: ReturnType<typeof connect>,
  state: PromptState,
  options: PushOptions,
  lock: Awaited<ReturnType<typeof readLock>>,
): Promise<PushResult> {
  const { id, file } = state;
  const local = state.local;
  if (!local) {
    return {
      id,
      file,
      result: "skipped",
      version: null,
      published: false,
      note: "file removed; push never deletes prompts",
    };
  }
  const prompt = local.prompt;
  const content = versionContent(prompt);
  // The file's tools passed the same schema the API validates with; only their static types differ.
  const tools = content.tools as unknown as ApiTool[];
  // Absent from the body when the file has none: a version without settings.
  const model = content.model === undefined ? {} : { model: content.model as ApiModelSettings };
  // Production is published with the version, as a save with `publish` does; another label is moved after.
  const label = options.publish === true ? "production" : options.publish || undefined;
  const publish = label === "production";
  let labels = otherLabels(state.remote?.labels);
  // The pins the lockfile keeps (docs/includes.md): sent back with a save, so that an edit elsewhere moves none.
  const pins = prompt.pins;
  const includes = pins === undefined ? {} : { includes: pins };
  const written = writtenReferences(content.sections).length > 0;
  const record = (latest: string, production: string | null, version = local.hash, saved = pins) =>
    lock.set(id, {
      file,
      hash: version,
      production,
      latest,
      name: prompt.name,
      description: prompt.description,
      labels,
      ...(saved !== undefined && Object.keys(saved).length > 0 ? { includes: saved } : {}),
    });
  // A version saved with includes: its pins as the server made them (a new include is pinned by the save).
  const pinned = async (version: string) =>
    written ? await serverPins(options, id, version).catch((e) => fail(e)) : undefined;
  const fail = (error: unknown): never => {
    if (error instanceof CliError) throw new CliError(`${id} (${file}): ${error.message}`);
    throw error;
  };
  const result = await pushVersion();
  if (label === undefined || publish || result.version === null) return result;
  const version = result.version;
  if (labels?.[label] === version) return result;
  try {
    await client.publish(id, version, { label });
  } catch (error) {
    if (error instanceof PromptstoreError) throw new CliError(`${id} (${file}): ${error.message}`);
    throw error;
  }
  labels = { ...labels, [label]: version };
  const entry = lock.get(id);
  if (entry) lock.set(id, { ...entry, labels });
  return { ...result, published: true };

  async function pushVersion(): Promise<PushResult> {
    // Narrowed above; a function of its own does not see that.
    const local = state.local as NonNullable<PromptState["local"]>;
    if (!state.remote) {
      const created = await talking(() =>
        client.create({
          id,
          name: prompt.name,
          ...(prompt.description !== "" ? { description: prompt.description } : {}),
          sections: content.sections,
          ...(tools.length > 0 ? { tools } : {}),
          ...model,
          ...includes,
          ...(options.message !== undefined ? { message: options.message } : {}),
          publish,
        }),
      );
      record(
        created.version,
        publish ? created.version : null,
        written ? created.version : local.hash,
        await pinned(created.version),
      );
      return { id, file, result: "created", version: created.version, published: publish };
    }

    const remote = state.remote;
    const needsPublish = publish && remote.production_version !== local.hash;
    if (!state.localChanged) {
      if (!needsPublish) {
        if (!state.serverChanged) record(remote.latest_version, remote.production_version);
        return { id, file, result: "unchanged", version: local.hash, published: false };
      }
      // The file is what the server holds already: publishing it needs no new version.
      await talking(() => client.publish(id, local.hash));
      record(remote.latest_version, local.hash);
      return { id, file, result: "unchanged", version: local.hash, published: true };
    }

    let saved: Awaited<ReturnType<typeof client.save>>;
    try {
      saved = await client.save(id, {
        sections: content.sections,
        tools,
        ...model,
        ...includes,
        ...(options.message !== undefined ? { message: options.message } : {}),
        publish,
        name: prompt.name,
        description: prompt.description,
        ...(options.force || !state.entry ? {} : { base_version: state.entry.latest }),
      });
    } catch (error) {
      if (error instanceof PromptstoreError && error.status === 409) {
        throw new CliError(
          `push refused for ${id} (${file}): latest moved on the server meanwhile; pull first, or push --force`,
        );
      }
      if (error instanceof PromptstoreError) throw new CliError(`${id} (${file}): ${error.message}`);
      throw error;
    }
    const latest = saved.created ? saved.version : remote.latest_version;
    const production = publish ? saved.version : remote.production_version;
    record(latest, production, written ? saved.version : local.hash, await pinned(saved.version));
    return {
      id,
      file,
      result: saved.created ? "saved" : "unchanged",
      version: saved.version,
      published: publish && remote.production_version !== saved.version,
    };
  }
}

export function describePush(report: PushReport): string {
  const results = report.prompts;
  const lines = results.map(
    (r) =>
      `${r.result.padEnd(9)} ${r.file}${r.version ? `  ${short(r.version)}` : ""}${r.published ? "  published" : ""}${r.note ? `  (${r.note})` : ""}`,
  );
  const count = (result: PushResult["result"]) => results.filter((r) => r.result === result).length;
  lines.push(...describeDatasetPush(report.datasets));
  lines.push(
    `${count("created")} created, ${count("saved")} saved, ${count("unchanged")} unchanged, ${results.filter((r) => r.published).length} published`,
  );
  if (report.datasets.length > 0) {
    const n = (result: DatasetPushResult["result"]) => report.datasets.filter((r) => r.result === result).length;
    lines.push(`datasets: ${n("created")} created, ${n("saved")} saved, ${n("unchanged")} unchanged`);
  }
  return lines.join("\n");
}
