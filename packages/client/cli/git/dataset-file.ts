import { createReadStream } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { caseId, caseJson, DatasetHasher, datasetCase, normalCase } from "@promptstore/core/evaluations/cases";
import { describeZodError } from "@promptstore/core/schemas";
import { CliError } from "../output.js";

/**
 * A dataset as a file beside the prompts (docs/git.md, "Datasets"): `datasets/<name>.jsonl`, one case a line,
 * each line the case's canonical JSON exactly as the server exports it. A file edited by hand may say a case
 * any way JSON can (key order, spaces, `"tags": []`); what counts is the cases it holds, normalized and
 * canonicalized as the server does, so the file's version hash is computed here, offline, with the server's own
 * code (core's normalCase, caseJson and DatasetHasher), and equals the hash of the version the server would
 * make of it.
 */
export const DATASETS_DIR = "datasets";
const EXTENSION = ".jsonl";

/**
 * A dataset's name as a file name: characters a file system may refuse or misread (`/ \ : * ? " < > |`,
 * control characters, `%` itself) and a leading dot are written as `%XX` (UTF-8 bytes), the rest as they are.
 */
export function datasetFileOf(name: string): string {
  let encoded = "";
  for (const [i, char] of [...name].entries()) {
    const unsafe = /[/\\:*?"<>|%\p{Cc}]/u.test(char) || (i === 0 && char === ".");
    encoded += unsafe ? percent(char) : char;
  }
  return `${DATASETS_DIR}/${encoded}${EXTENSION}`;
}

const percent = (char: string): string =>
  [...Buffer.from(char, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** The dataset name a file in `datasets/` stands for, or undefined for a file that is not a dataset. */
export function datasetNameOf(fileName: string): string | undefined {
  if (!fileName.endsWith(EXTENSION) || fileName.startsWith(".")) return undefined;
  const base = fileName.slice(0, -EXTENSION.length);
  try {
    const name = decodeURIComponent(base);
    return name.trim() === "" ? undefined : name;
  } catch {
    throw new CliError(`${DATASETS_DIR}/${fileName}: the name is not valid: a % must be followed by two hex digits`);
  }
}

/** A dataset file of the directory, with the version its cases make. */
export interface LocalDataset {
  name: string;
  /** Relative to the directory: `datasets/<name>.jsonl`. */
  file: string;
  version: string;
  cases: number;
  bytes: number;
}

/** Every `datasets/*.jsonl` of the directory, hashed; none when there is no `datasets/`. */
export async function readDatasets(dir: string): Promise<Map<string, LocalDataset>> {
  let names: string[];
  try {
    names = await readdir(join(dir, DATASETS_DIR));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return new Map();
    throw error;
  }
  const found = new Map<string, LocalDataset>();
  for (const fileName of names.sort()) {
    const name = datasetNameOf(fileName);
    if (name === undefined) continue;
    const file = `${DATASETS_DIR}/${fileName}`;
    const other = found.get(name);
    if (other) throw new CliError(`${file}: names the dataset ${JSON.stringify(name)}, as ${other.file} does`);
    found.set(name, { name, file, ...(await hashDatasetFile(join(dir, file), file)) });
  }
  return found;
}

/** The version hash of a dataset file, read as it streams (never whole): what the server would make of it. */
export async function hashDatasetFile(
  path: string,
  label: string,
): Promise<{ version: string; cases: number; bytes: number }> {
  const hasher = new DatasetHasher();
  let bytes = 0;
  for await (const json of datasetFileCases(path, label)) {
    hasher.add(json);
    bytes += Buffer.byteLength(json) + 1;
  }
  return { version: hasher.digest(), cases: hasher.size, bytes };
}

/** The same keys the server drops while parsing (secure-json-parse's "remove"), so that both see one case. */
function reviver(key: string, value: unknown): unknown {
  if (key === "__proto__") return undefined;
  if (key === "constructor" && value !== null && typeof value === "object" && Object.hasOwn(value, "prototype")) {
    return undefined;
  }
  return value;
}

/** A line longer than this is refused before it is held whole, as the server refuses it. */
const MAX_LINE_BYTES = 1024 * 1024;

/**
 * The canonical JSON of each case of a dataset file, in order. Lines are read as the server's JSONL import
 * reads them: split at `\n` (a `\r` before it dropped), blank lines skipped, a byte order mark at the start
 * ignored; each case checked with the server's schema, so a mistake is named here with its line, before
 * anything is sent: `datasets/customers.jsonl: line 12: vars.company: must be a string`.
 */
export async function* datasetFileCases(path: string, label: string): AsyncGenerator<string> {
  const seen = new Map<string, number>();
  let parts: Buffer[] = [];
  let held = 0;
  let line = 1;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const problem = (message: string) => new CliError(`${label}: line ${line}: ${message}`);
  const finish = (): string | undefined => {
    let text: string;
    try {
      text = decoder.decode(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts));
    } catch {
      throw problem("is not valid UTF-8");
    }
    parts = [];
    held = 0;
    if (line === 1 && text.startsWith("\ufeff")) text = text.slice(1);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() === "") return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text, reviver);
    } catch {
      throw problem("is not valid JSON");
    }
    const checked = datasetCase.safeParse(value);
    if (!checked.success) throw problem(describeZodError(checked.error, "case"));
    const json = caseJson(normalCase(checked.data));
    const id = caseId(json);
    const first = seen.get(id);
    if (first !== undefined) throw problem(`repeats line ${first}; a case is in a version once`);
    seen.set(id, line);
    return json;
  };
  try {
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        held += end - start;
        if (held > MAX_LINE_BYTES) throw problem(`is longer than ${MAX_LINE_BYTES} bytes`);
        parts.push(chunk.subarray(start, end));
        const found = finish();
        if (found !== undefined) yield found;
        line++;
        start = end + 1;
      }
      if (start < chunk.length) {
        held += chunk.length - start;
        if (held > MAX_LINE_BYTES) throw problem(`is longer than ${MAX_LINE_BYTES} bytes`);
        parts.push(Buffer.from(chunk.subarray(start)));
      }
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new CliError(`${label}: no such file`);
    throw error;
  }
  if (held > 0) {
    const found = finish();
    if (found !== undefined) yield found;
  }
}
