import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CliError } from "../output.js";
import type { Lock } from "./lockfile.js";
import { lockedPins } from "./pins.js";
import { fileHash, type PromptFile, parsePromptFile } from "./prompt-file.js";

/** A prompt file found in the directory, with the hash of the version it describes. */
export interface LocalPrompt {
  file: string;
  prompt: PromptFile;
  hash: string;
}

/**
 * Every `*.md` of the directory (not its subdirectories) but README.md is a prompt file. A file with includes
 * takes the lockfile's pins of the references it still writes (docs/includes.md): its hash covers them.
 */
export async function readWorkspace(dir: string, lock?: Lock): Promise<Map<string, LocalPrompt>> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw error;
  }
  const found = new Map<string, LocalPrompt>();
  for (const file of names.filter((n) => n.endsWith(".md") && n.toLowerCase() !== "readme.md").sort()) {
    const prompt = parsePromptFile(await readFile(join(dir, file), "utf8"), file);
    const other = found.get(prompt.id);
    if (other) throw new CliError(`${file}: id ${prompt.id} is also the id of ${other.file}`);
    const pins = lockedPins(lock?.get(prompt.id), prompt.content.sections);
    if (pins !== undefined) prompt.pins = pins;
    found.set(prompt.id, { file, prompt, hash: fileHash(prompt) });
  }
  return found;
}

export async function writePromptFile(dir: string, file: string, text: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, file);
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

export async function removePromptFile(dir: string, file: string): Promise<void> {
  await rm(join(dir, file), { force: true });
}

/** Whether a file still says what the lock recorded: its content and its name and description. */
export function sameAsLock(
  local: LocalPrompt,
  entry: { hash: string; name: string; description: string } | undefined,
): boolean {
  return (
    entry !== undefined &&
    local.hash === entry.hash &&
    local.prompt.name === entry.name &&
    local.prompt.description === entry.description
  );
}
