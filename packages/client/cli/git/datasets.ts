import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { DATASET_LIMITS } from "@promptstore/core/evaluations/cases";
import { CliError } from "../output.js";
import { ApiError, answerOf, type RemoteOptions, request, short } from "./connection.js";
import { datasetFileCases, datasetFileOf, hashDatasetFile, type LocalDataset, readDatasets } from "./dataset-file.js";
import type { DatasetLockEntry, Lock } from "./lockfile.js";

/** A dataset as the server lists it. */
export interface RemoteDataset {
  id: string;
  name: string;
  description: string | null;
  version: string;
  cases: number;
}

export type DatasetState =
  | "unchanged"
  | "changed locally"
  | "changed on server"
  | "changed locally and on server"
  | "new"
  | "new, but the name exists on the server"
  | "deleted locally"
  | "deleted on server"
  | "changed locally, deleted on server";

/** Where one dataset stands between its file, the lockfile and (when asked) the server. */
export interface DatasetStatus {
  name: string;
  file: string;
  state: DatasetState;
  local: LocalDataset | undefined;
  entry: DatasetLockEntry | undefined;
  remote: RemoteDataset | undefined;
  localChanged: boolean;
  serverChanged: boolean;
}

/** Every dataset of the key's project (one request: the list is not paged). */
export async function remoteDatasets(options: RemoteOptions): Promise<RemoteDataset[]> {
  const path = "/api/v2/datasets";
  const data = (await answerOf(await request(options, "GET", path), "GET", path)) as { datasets: RemoteDataset[] };
  return data.datasets;
}

/**
 * Compares dataset files with the lock, offline (versions are computed locally), and with the server when
 * `remote` is given. A dataset is matched with the server by the id the lock recorded (a rename on the server
 * is followed), and by name when the lock does not know it.
 */
export function classifyDatasets(
  local: Map<string, LocalDataset>,
  lock: Lock,
  remote: RemoteDataset[] | undefined,
): DatasetStatus[] {
  const byId = new Map(remote?.map((d) => [d.id, d]));
  const byName = new Map(remote?.map((d) => [d.name, d]));
  const names = new Set([...local.keys(), ...lock.datasets.keys()]);
  const rows: DatasetStatus[] = [];
  for (const name of [...names].sort()) {
    const file = local.get(name);
    const entry = lock.datasets.get(name);
    const server = entry ? byId.get(entry.id) : byName.get(name);
    const localChanged = file !== undefined && file.version !== entry?.version;
    let serverChanged = false;
    let state: DatasetState;
    if (!entry) {
      state = server && server.version !== file?.version ? "new, but the name exists on the server" : "new";
    } else if (remote && !server) {
      serverChanged = true;
      state = localChanged ? "changed locally, deleted on server" : "deleted on server";
    } else {
      serverChanged = server !== undefined && (server.version !== entry.version || server.name !== name);
      state = !file
        ? "deleted locally"
        : localChanged && serverChanged
          ? "changed locally and on server"
          : localChanged
            ? "changed locally"
            : serverChanged
              ? "changed on server"
              : "unchanged";
    }
    rows.push({
      name,
      file: file?.file ?? entry?.file ?? datasetFileOf(name),
      state,
      local: file,
      entry,
      remote: server,
      localChanged,
      serverChanged,
    });
  }
  return rows;
}

// ---- pull

export interface DatasetPullResult {
  name: string;
  file: string;
  result: "written" | "unchanged" | "kept local changes" | "removed" | "untracked";
  version: string | null;
  cases: number | null;
}

export interface DatasetPullPlan {
  local: Map<string, LocalDataset>;
  remote: RemoteDataset[];
  rows: DatasetStatus[];
  /** What pull refuses (without --force): `<file> (<state>)`. */
  conflicts: string[];
}

const PULL_CONFLICTS = new Set<DatasetState>([
  "changed locally and on server",
  "new, but the name exists on the server",
  "changed locally, deleted on server",
]);

export async function planDatasetPull(dir: string, lock: Lock, options: RemoteOptions): Promise<DatasetPullPlan> {
  const local = await readDatasets(dir);
  const remote = await remoteDatasets(options);
  const rows = classifyDatasets(local, lock, remote);
  const conflicts = rows.filter((r) => PULL_CONFLICTS.has(r.state)).map((r) => `${r.file} (${r.state})`);
  return { local, remote, rows, conflicts };
}

/**
 * Writes every dataset of the server whose file is missing or behind, as the server exports it (canonical
 * JSON, one case a line), and records it in the lock. A file edited since the lock is kept when the server
 * did not move. The caller refused the plan's conflicts already, unless `force`.
 */
export async function pullDatasets(
  dir: string,
  lock: Lock,
  plan: DatasetPullPlan,
  options: RemoteOptions & { force?: boolean },
): Promise<DatasetPullResult[]> {
  const results: DatasetPullResult[] = [];
  const rowOf = new Map<string, DatasetStatus>();
  for (const row of plan.rows) {
    const id = row.entry?.id ?? row.remote?.id;
    if (id !== undefined) rowOf.set(id, row);
  }
  for (const server of plan.remote) {
    const row = rowOf.get(server.id);
    const file = datasetFileOf(server.name);
    const done = (result: DatasetPullResult["result"]) =>
      results.push({ name: server.name, file, result, version: server.version, cases: server.cases });
    if (row?.state === "changed locally" && !options.force) {
      results.push({
        name: row.name,
        file: row.file,
        result: "kept local changes",
        version: server.version,
        cases: server.cases,
      });
      continue;
    }
    if (row?.state === "unchanged" || (row?.state === "new" && row.local?.version === server.version)) {
      lock.datasets.set(server.name, { id: server.id, file, version: server.version, cases: server.cases });
      done("unchanged");
      continue;
    }
    await downloadDataset(dir, file, server, options);
    // Renamed on the server: the old file goes (it was not edited, or --force said so).
    if (row && row.name !== server.name) {
      await rm(join(dir, row.file), { force: true });
      lock.datasets.delete(row.name);
    }
    lock.datasets.set(server.name, { id: server.id, file, version: server.version, cases: server.cases });
    done("written");
  }
  const onServer = new Set(plan.remote.map((d) => d.id));
  for (const row of plan.rows) {
    if (!row.entry || onServer.has(row.entry.id)) continue;
    // Deleted on the server: an untouched file goes with it, an edited one stays (push would create it again).
    lock.datasets.delete(row.name);
    if (row.localChanged) {
      results.push({ name: row.name, file: row.file, result: "untracked", version: null, cases: null });
    } else {
      await rm(join(dir, row.file), { force: true });
      results.push({ name: row.name, file: row.file, result: "removed", version: null, cases: null });
    }
  }
  return results;
}

/** The server's export of one version, streamed to the file, whose hash is checked before it replaces any. */
async function downloadDataset(dir: string, file: string, server: RemoteDataset, options: RemoteOptions) {
  const path = `/api/v2/datasets/${server.id}/export?version=${server.version}`;
  const response = await request(options, "GET", path);
  if (!response.ok || response.body === null) await answerOf(response, "GET", path);
  const target = join(dir, file);
  await mkdir(dirname(target), { recursive: true });
  await pipeline(Readable.fromWeb(response.body as WebReadableStream), createWriteStream(`${target}.tmp`));
  const written = await hashDatasetFile(`${target}.tmp`, file);
  if (written.version !== server.version) {
    await rm(`${target}.tmp`, { force: true });
    throw new CliError(
      `${file}: the server's export of ${short(server.version)} reads back as ${short(written.version)}`,
    );
  }
  await rename(`${target}.tmp`, target);
}

export function describeDatasetPull(results: DatasetPullResult[]): string[] {
  return results.map(
    (r) => `${r.result.padEnd(18)} ${r.file}${r.version ? `  ${short(r.version)}  ${r.cases} cases` : ""}`,
  );
}

// ---- push

export interface DatasetPushResult {
  name: string;
  file: string;
  /** created: a new dataset; saved: a new version; unchanged: nothing sent (or a version the server had). */
  result: "created" | "saved" | "unchanged" | "skipped";
  version: string | null;
  cases: number | null;
  note?: string;
}

export interface DatasetPushPlan {
  rows: DatasetStatus[];
  conflicts: string[];
}

export async function planDatasetPush(
  local: Map<string, LocalDataset>,
  lock: Lock,
  options: RemoteOptions,
): Promise<DatasetPushPlan> {
  if (local.size === 0 && lock.datasets.size === 0) return { rows: [], conflicts: [] };
  const rows = classifyDatasets(local, lock, await remoteDatasets(options));
  const conflicts: string[] = [];
  for (const r of rows) {
    if (r.state === "new, but the name exists on the server") {
      conflicts.push(
        `${r.file}: a dataset named ${JSON.stringify(r.name)} exists on the server and is not in the lockfile`,
      );
    } else if (r.state === "changed locally and on server") {
      conflicts.push(
        `${r.file}: the dataset changed on the server since the lock (${short(r.entry?.version)} → ${short(r.remote?.version)})`,
      );
    } else if (r.state === "changed locally, deleted on server") {
      conflicts.push(`${r.file}: the dataset was deleted on the server since the lock`);
    }
  }
  return { rows, conflicts };
}

/** Cases sent in one `PUT` (or create) at most; more, or more bytes, go as a streamed import of the file. */
const PUT_MAX_CASES = DATASET_LIMITS.casesPerRequest;
const PUT_MAX_BYTES = 768 * 1024;

/**
 * Sends each dataset file changed since the lock: one request replacing its cases (`PUT`, the lock's version as
 * `base`), or the file streamed to the import route when it is large; creates the datasets the server does
 * not have. A file whose cases make the version the lock (or the server) has sends nothing.
 */
export async function pushDatasets(
  dir: string,
  lock: Lock,
  plan: DatasetPushPlan,
  options: RemoteOptions & { message?: string; force?: boolean },
): Promise<DatasetPushResult[]> {
  const results: DatasetPushResult[] = [];
  for (const row of plan.rows) {
    const local = row.local;
    if (!local) {
      results.push({
        name: row.name,
        file: row.file,
        result: "skipped",
        version: null,
        cases: null,
        note: "file removed; push never deletes datasets",
      });
      continue;
    }
    const record = (id: string, version: string) =>
      lock.datasets.set(row.name, { id, file: local.file, version, cases: local.cases });
    const unchanged = (version: string) =>
      results.push({ name: row.name, file: local.file, result: "unchanged", version, cases: local.cases });
    const server = row.remote;
    if (!row.localChanged) {
      if (row.entry && !row.serverChanged) record(row.entry.id, row.entry.version);
      unchanged(local.version);
      continue;
    }
    if (server && server.version === local.version) {
      record(server.id, server.version);
      unchanged(local.version);
      continue;
    }
    const saved = server
      ? await replaceDataset(dir, local, server, row.entry && !options.force ? row.entry.version : undefined, options)
      : await createDataset(dir, local, options);
    if (saved.version !== local.version) {
      throw new CliError(
        `${local.file}: the server made version ${short(saved.version)} of it, but its cases hash to ${short(local.version)}`,
      );
    }
    record(saved.id, saved.version);
    results.push({
      name: row.name,
      file: local.file,
      result: server ? (saved.created ? "saved" : "unchanged") : "created",
      version: saved.version,
      cases: local.cases,
    });
  }
  return results;
}

const small = (local: LocalDataset) => local.cases <= PUT_MAX_CASES && local.bytes <= PUT_MAX_BYTES;

async function casesOf(dir: string, local: LocalDataset): Promise<unknown[]> {
  const cases: unknown[] = [];
  for await (const json of datasetFileCases(join(dir, local.file), local.file)) cases.push(JSON.parse(json));
  return cases;
}

/** The file as the import route reads it: its canonical lines, streamed (never held whole). */
function fileStream(dir: string, local: LocalDataset): () => ReadableStream<Uint8Array> {
  return () =>
    Readable.toWeb(
      Readable.from(
        (async function* () {
          for await (const json of datasetFileCases(join(dir, local.file), local.file)) yield Buffer.from(`${json}\n`);
        })(),
      ),
    ) as unknown as ReadableStream<Uint8Array>;
}

async function send(
  options: RemoteOptions,
  method: string,
  path: string,
  init: Parameters<typeof request>[3],
  file: string,
) {
  try {
    return await answerOf(await request(options, method, path, init), method, path.split("?")[0] as string);
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      throw new CliError(`push refused for ${file}: ${error.serverMessage}; pull first, or push --force`);
    }
    if (error instanceof ApiError) throw new CliError(`${file}: ${error.message}`);
    throw error;
  }
}

async function replaceDataset(
  dir: string,
  local: LocalDataset,
  server: RemoteDataset,
  base: string | undefined,
  options: RemoteOptions & { message?: string },
): Promise<{ id: string; version: string; created: boolean }> {
  if (small(local)) {
    const body = {
      cases: await casesOf(dir, local),
      ...(options.message !== undefined ? { message: options.message } : {}),
      ...(base !== undefined ? { base } : {}),
    };
    const path = `/api/v2/datasets/${server.id}`;
    return send(options, "PUT", path, { body: JSON.stringify(body), contentType: "application/json" }, local.file);
  }
  const query = new URLSearchParams({ mode: "replace" });
  if (options.message !== undefined) query.set("message", options.message);
  if (base !== undefined) query.set("base", base);
  const path = `/api/v2/datasets/${server.id}/import?${query}`;
  return send(options, "POST", path, { body: fileStream(dir, local), contentType: "application/x-ndjson" }, local.file);
}

async function createDataset(
  dir: string,
  local: LocalDataset,
  options: RemoteOptions & { message?: string },
): Promise<{ id: string; version: string; created: boolean }> {
  let created: { id: string; version: string };
  if (small(local)) {
    const body = {
      name: local.name,
      cases: await casesOf(dir, local),
      ...(options.message !== undefined ? { message: options.message } : {}),
    };
    created = await send(
      options,
      "POST",
      "/api/v2/datasets",
      { body: JSON.stringify(body), contentType: "application/json" },
      local.file,
    );
  } else {
    const query = new URLSearchParams({ name: local.name });
    if (options.message !== undefined) query.set("message", options.message);
    created = await send(
      options,
      "POST",
      `/api/v2/datasets/import?${query}`,
      { body: fileStream(dir, local), contentType: "application/x-ndjson" },
      local.file,
    );
  }
  return { id: created.id, version: created.version, created: true };
}

export function describeDatasetPush(results: DatasetPushResult[]): string[] {
  return results.map(
    (r) =>
      `${r.result.padEnd(9)} ${r.file}${r.version ? `  ${short(r.version)}  ${r.cases} cases` : ""}${r.note ? `  (${r.note})` : ""}`,
  );
}

// ---- status and check

export interface DatasetStatusRow {
  name: string;
  file: string;
  state: DatasetState;
  local: string | null;
  lock: string | null;
  server: string | null;
}

export async function datasetStatus(
  dir: string,
  lock: Lock,
  options: RemoteOptions & { offline?: boolean },
): Promise<DatasetStatusRow[]> {
  const local = await readDatasets(dir);
  // No dataset file and none in the lock: nothing to show, and no request (status costs the prompts' listing alone).
  if (local.size === 0 && lock.datasets.size === 0) return [];
  const remote = options.offline ? undefined : await remoteDatasets(options);
  return classifyDatasets(local, lock, remote).map((r) => ({
    name: r.name,
    file: r.file,
    state: r.state,
    local: r.local?.version ?? null,
    lock: r.entry?.version ?? null,
    server: r.remote?.version ?? null,
  }));
}

export interface DatasetDifference {
  name: string;
  file: string;
  /** The version the lock recorded; null when the lock does not know the dataset. */
  lock: string | null;
  /** The server's head; null when the dataset is gone from the server. */
  server: string | null;
}

/**
 * Whether the server's datasets are what the lockfile says: a head moved, a dataset deleted, or one the lock
 * does not know. Only for a lockfile that records datasets: one written before datasets existed (or of a
 * project without any) guards its prompts alone, as it always did.
 */
export async function checkDatasets(lock: Lock, options: RemoteOptions): Promise<DatasetDifference[] | undefined> {
  if (lock.datasets.size === 0) return undefined;
  const remote = await remoteDatasets(options);
  const byId = new Map(remote.map((d) => [d.id, d]));
  const known = new Set<string>();
  const differences: DatasetDifference[] = [];
  for (const [name, entry] of lock.datasets) {
    const server = byId.get(entry.id);
    known.add(entry.id);
    if (server?.version !== entry.version) {
      differences.push({ name, file: entry.file, lock: entry.version, server: server?.version ?? null });
    }
  }
  for (const d of remote) {
    if (!known.has(d.id))
      differences.push({ name: d.name, file: datasetFileOf(d.name), lock: null, server: d.version });
  }
  return differences.sort((a, b) => a.name.localeCompare(b.name));
}

export function describeDatasetDifferences(differences: DatasetDifference[]): string {
  return differences
    .map((d) =>
      d.server === null
        ? `${d.file}: deleted on the server (lock ${short(d.lock)})`
        : d.lock === null
          ? `${d.file}: on the server (${short(d.server)}) but not in promptstore.lock`
          : `${d.file}: the server has ${short(d.server)}, promptstore.lock says ${short(d.lock)}`,
    )
    .join("\n");
}
