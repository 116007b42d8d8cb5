import { createReadStream, statSync } from "node:fs";
import { extname } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DATASET_ID } from "@promptstore/core/evaluations/dataset-api";
import type { Handler } from "./args.js";
import { api, connect, fetchWaitingOutLimits, type RemoteOptions, short } from "./git/connection.js";
import { CliError, emit } from "./output.js";

/** A dataset as the list answers it (docs/evaluations.md). */
interface DatasetItem {
  id: string;
  name: string;
  description: string | null;
  version: string;
  cases: number;
}

interface Saved {
  id: string;
  name?: string;
  version: string;
  created?: boolean;
  cases: number;
}

/** The file's type by its extension: JSONL (`.jsonl`, `.ndjson`) or CSV. */
function fileType(file: string): string {
  const ext = extname(file).toLowerCase();
  if (ext === ".jsonl" || ext === ".ndjson") return "application/x-ndjson";
  if (ext === ".csv") return "text/csv";
  throw new CliError(`${file}: give a .jsonl (or .ndjson) or a .csv file`);
}

function remote(opts: RemoteOptions): { baseUrl: string; apiKey: string } {
  connect(opts).close(); // the same errors as every command when --url or --key is missing
  return {
    baseUrl: (opts.url ?? process.env.PROMPTSTORE_URL ?? "").replace(/\/+$/, ""),
    apiKey: opts.key ?? process.env.PROMPTSTORE_API_KEY ?? "",
  };
}

async function datasets(opts: RemoteOptions): Promise<DatasetItem[]> {
  return ((await api(opts, "GET", "/api/v2/datasets")) as { datasets: DatasetItem[] }).datasets;
}

/** A dataset by id (`ds_…`) or by its name in the project. */
async function findDataset(opts: RemoteOptions, ref: string): Promise<DatasetItem | undefined> {
  const all = await datasets(opts);
  return all.find((d) => d.id === ref) ?? all.find((d) => d.name === ref);
}

/** The failure envelope of an answer, as one line naming the call. */
async function failed(method: string, path: string, response: Response): Promise<CliError> {
  let error = "";
  try {
    error = ((await response.json()) as { error?: string }).error ?? "";
  } catch {
    // not JSON
  }
  return new CliError(`${method} ${path}: ${response.status} ${error}`.trim());
}

/**
 * Datasets of test cases over HTTP (docs/evaluations.md, "Datasets"): files are streamed to the server and
 * back, never read whole here either, so a file of any size the server accepts goes through.
 */
export const DATASET_COMMANDS: Record<string, Handler> = {
  async list(_, opts: RemoteOptions) {
    remote(opts);
    const all = await datasets(opts);
    emit(!!opts.json, { datasets: all }, () =>
      all.length === 0
        ? "no datasets"
        : all
            .map((d) => `${d.id}  ${short(d.version)}  ${d.cases} case${d.cases === 1 ? "" : "s"}  ${d.name}`)
            .join("\n"),
    );
  },

  async import([name, file], opts: RemoteOptions & { append?: boolean; message?: string }) {
    const type = fileType(file as string);
    try {
      if (!statSync(file as string).isFile()) throw new Error();
    } catch {
      throw new CliError(`${file}: no such file`);
    }
    const { baseUrl, apiKey } = remote(opts);
    const existing = await findDataset(opts, name as string);
    const query = new URLSearchParams();
    let path: string;
    if (existing === undefined) {
      query.set("name", name as string);
      path = "/api/v2/datasets/import";
    } else {
      query.set("mode", opts.append ? "append" : "replace");
      path = `/api/v2/datasets/${existing.id}/import`;
    }
    if (opts.message !== undefined) query.set("message", opts.message);
    const url = `${baseUrl}${path}?${query}`;
    // A fresh stream for every attempt: a 429 is waited out and the file sent again from its start.
    const response = await fetchWaitingOutLimits(url, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": type },
      get body() {
        return Readable.toWeb(createReadStream(file as string)) as unknown as ReadableStream;
      },
      duplex: "half",
    } as RequestInit);
    if (!response.ok) throw await failed("POST", path, response);
    const saved = ((await response.json()) as { data: Saved }).data;
    emit(!!opts.json, saved, () => {
      const what = `${saved.cases} case${saved.cases === 1 ? "" : "s"}`;
      if (existing === undefined) return `${saved.id}  created ${name} at ${short(saved.version)}: ${what}`;
      return saved.created
        ? `${saved.id}  ${name} → ${short(saved.version)}: ${what}`
        : `${saved.id}  ${name} unchanged at ${short(saved.version)}: ${what} (this version existed already)`;
    });
  },

  async export([ref], opts: RemoteOptions & { version?: string }) {
    const { baseUrl, apiKey } = remote(opts);
    const id = DATASET_ID.test(ref as string) ? (ref as string) : (await findDataset(opts, ref as string))?.id;
    if (id === undefined) throw new CliError(`no dataset named ${ref} in this project`);
    const path = `/api/v2/datasets/${id}/export`;
    const query = opts.version === undefined ? "" : `?version=${encodeURIComponent(opts.version)}`;
    const response = await fetchWaitingOutLimits(`${baseUrl}${path}${query}`, { headers: { "x-api-key": apiKey } });
    if (!response.ok || response.body === null) throw await failed("GET", path, response);
    // Written as it arrives, at the pace stdout takes it.
    await pipeline(Readable.fromWeb(response.body as never), process.stdout, { end: false });
  },
};
