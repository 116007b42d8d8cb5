import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FULL_HASH } from "@promptstore/core/version-ref";
import { z } from "zod";
import { CliError } from "../output.js";

export const LOCKFILE = "promptstore.lock";

const hash = z.string().regex(FULL_HASH);

const lockEntry = z.strictObject({
  file: z.string().min(1),
  /** The content hash of the file as last pulled or pushed. */
  hash,
  /** The server's production and latest when the file was last pulled or pushed. */
  production: hash.nullable(),
  latest: hash,
  name: z.string(),
  description: z.string(),
  /** The server's other labels (docs/releases.md) when last pulled or pushed; absent when there were none. */
  labels: z.record(z.string(), hash).optional(),
  /**
   * The pins of the includes of the version `hash` names (docs/includes.md): each include's reference, as the
   * file writes it (`safety`, `safety#Tone@staging`), to the full hash it took. Absent when it has none.
   */
  includes: z.record(z.string(), hash).optional(),
});

/** A dataset file (docs/git.md, "Datasets"), by the dataset's name. */
const datasetLockEntry = z.strictObject({
  /** The dataset on the server: a rename there is followed, not taken for another dataset. */
  id: z.string().regex(/^ds_[0-9a-f]{24}$/),
  file: z.string().min(1),
  /** The version of the file's cases when last pulled or pushed, which was then the server's head. */
  version: hash,
  cases: z.number().int().min(0),
});

const lockDocument = z.strictObject({
  lockfile_version: z.literal(1),
  prompts: z.record(z.string(), lockEntry),
  /** Absent when the project has no datasets: a lockfile without them stays the file it always was. */
  datasets: z.record(z.string(), datasetLockEntry).optional(),
});

export type LockEntry = z.infer<typeof lockEntry>;
export type DatasetLockEntry = z.infer<typeof datasetLockEntry>;

/** The prompts by id, and the datasets by name. */
export class Lock extends Map<string, LockEntry> {
  readonly datasets = new Map<string, DatasetLockEntry>();
}

/** The lockfile of a directory; an empty one when there is none yet. */
export async function readLock(dir: string): Promise<Lock> {
  let text: string;
  try {
    text = await readFile(join(dir, LOCKFILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Lock();
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CliError(`${LOCKFILE}: is not valid JSON`);
  }
  const checked = lockDocument.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new CliError(`${LOCKFILE}: ${issue?.path.join(".") || "document"}: ${issue?.message ?? "is invalid"}`);
  }
  const lock = new Lock(Object.entries(checked.data.prompts));
  for (const [name, entry] of Object.entries(checked.data.datasets ?? {})) lock.datasets.set(name, entry);
  return lock;
}

/** Prompts sorted by id (datasets by name) with a fixed key order, so that the file changes in a review only where a prompt did. */
export async function writeLock(dir: string, lock: Lock): Promise<void> {
  const prompts: Record<string, LockEntry> = {};
  for (const id of [...lock.keys()].sort()) {
    const e = lock.get(id) as LockEntry;
    prompts[id] = {
      file: e.file,
      hash: e.hash,
      production: e.production,
      latest: e.latest,
      name: e.name,
      description: e.description,
      // Only when there are any: a project without labels keeps the lockfile it always had.
      ...(e.labels && Object.keys(e.labels).length > 0 ? { labels: e.labels } : {}),
      // Only for a version with includes, by reference in a fixed order.
      ...(e.includes && Object.keys(e.includes).length > 0 ? { includes: sortedPins(e.includes) } : {}),
    };
  }
  const datasets: Record<string, DatasetLockEntry> = {};
  for (const name of [...lock.datasets.keys()].sort()) {
    const e = lock.datasets.get(name) as DatasetLockEntry;
    datasets[name] = { id: e.id, file: e.file, version: e.version, cases: e.cases };
  }
  const document = { lockfile_version: 1, prompts, ...(lock.datasets.size > 0 ? { datasets } : {}) };
  await mkdir(dir, { recursive: true });
  const path = join(dir, LOCKFILE);
  // Written whole, then renamed: an interrupted run never leaves half a lockfile.
  await writeFile(`${path}.tmp`, `${JSON.stringify(document, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

function sortedPins(pins: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(pins).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A prompt's labels as the lockfile keeps them: every one but production, which has its own field. */
export function otherLabels(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!labels) return undefined;
  const { production: _, ...others } = labels;
  return Object.keys(others).length > 0 ? others : undefined;
}
