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
});

const lockDocument = z.strictObject({
  lockfile_version: z.literal(1),
  prompts: z.record(z.string(), lockEntry),
});

export type LockEntry = z.infer<typeof lockEntry>;
export type Lock = Map<string, LockEntry>;

/** The lockfile of a directory; an empty one when there is none yet. */
export async function readLock(dir: string): Promise<Lock> {
  let text: string;
  try {
    text = await readFile(join(dir, LOCKFILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
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
  return new Map(Object.entries(checked.data.prompts));
}

/** Sorted by id with a fixed key order, so that the file changes in a review only where a prompt did. */
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
    };
  }
  await mkdir(dir, { recursive: true });
  const path = join(dir, LOCKFILE);
  // Written whole, then renamed: an interrupted run never leaves half a lockfile.
  await writeFile(`${path}.tmp`, `${JSON.stringify({ lockfile_version: 1, prompts }, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

/** A prompt's labels as the lockfile keeps them: every one but production, which has its own field. */
export function otherLabels(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!labels) return undefined;
  const { production: _, ...others } = labels;
  return Object.keys(others).length > 0 ? others : undefined;
}
