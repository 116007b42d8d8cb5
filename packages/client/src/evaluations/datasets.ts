import { type HttpSettings, type RawBody, request } from "../http.js";
import type { CallOptions } from "../options.js";
import type {
  AppendCasesInput,
  CreateDatasetInput,
  CreatedDataset,
  Dataset,
  DatasetCase,
  DatasetCaseEntry,
  DatasetCasesPage,
  DatasetCasesQuery,
  DatasetList,
  DatasetVersions,
  DeletedDataset,
  ReplaceCasesInput,
  SavedDataset,
  UpdateDatasetInput,
} from "../types.js";
import { lines, openStreamed } from "./streamed.js";

/** The formats an import takes: JSONL (one case a line) or CSV (a header; every column a variable but `expected`, `tags`, `messages`). */
export type DatasetFileFormat = "jsonl" | "csv";

const CONTENT_TYPES: Record<DatasetFileFormat, string> = { jsonl: "application/x-ndjson", csv: "text/csv" };

export interface DatasetImportOptions extends CallOptions {
  /** Default `jsonl`. */
  format?: DatasetFileFormat;
  /** A change note kept with the version. */
  message?: string;
}

/** A version's cases as the server streams them (`GET /api/v2/datasets/{id}/export`). */
export interface DatasetExport {
  id: string;
  /** The version exported (the head unless one was asked for). */
  version: string;
  /** How many cases it holds. */
  count: number;
  /**
   * The cases in order, read from the answer as it arrives: iterate it to the end, or `return()` it (a
   * `break` out of `for await` does) to end the request.
   */
  cases: AsyncGenerator<DatasetCase, void, undefined>;
}

const path = (id: string, rest = "") => `/api/v2/datasets/${encodeURIComponent(id)}${rest}`;

/**
 * Datasets of test cases (docs/evaluations.md, "Datasets"): `client.datasets`. Reads need a key with scope
 * `read`, every change `write`. A dataset version is the hash of its cases: saving the same cases again makes
 * no new version (`created: false`).
 */
export class Datasets {
  constructor(
    private readonly http: HttpSettings,
    private readonly closed: AbortSignal,
  ) {}

  /**
   * The project's datasets, each with its head version and case count (`GET /api/v2/datasets`).
   *
   * @example
   * ```ts
   * const { datasets } = await client.datasets.list();
   * for (const d of datasets) console.log(d.id, d.name, d.cases);
   * ```
   */
  list(options: CallOptions = {}): Promise<DatasetList> {
    return this.call("GET", "/api/v2/datasets", { idempotent: true, signal: options.signal });
  }

  /**
   * A dataset at its head, or at `version` (a hash or a unique prefix of 7+) (`GET /api/v2/datasets/{id}`).
   *
   * @example
   * ```ts
   * const dataset = await client.datasets.get("ds_0123456789abcdef01234567");
   * console.log(dataset.head, dataset.cases);
   * ```
   */
  get(id: string, options: CallOptions & { version?: string } = {}): Promise<Dataset> {
    return this.call("GET", path(id), {
      query: { version: options.version },
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * Creates a dataset with its first cases, or from a prompt's saved examples (`POST /api/v2/datasets`).
   * At most 1 000 cases a request: add more with {@link Datasets.append}, or import a file.
   *
   * @example
   * ```ts
   * const created = await client.datasets.create({
   *   name: "Support questions",
   *   cases: [{ vars: { customer: "Ada" }, expected: "Hello Ada" }, { vars: { customer: "Bob" } }],
   * });
   * console.log(created.id, created.version, created.cases); // "ds_…", "9f2c…", 2
   * ```
   */
  create(input: CreateDatasetInput, options: CallOptions = {}): Promise<CreatedDataset> {
    return this.call("POST", "/api/v2/datasets", { body: input, idempotent: false, signal: options.signal });
  }

  /**
   * A new version holding exactly these cases (`PUT /api/v2/datasets/{id}`); the same cases as an existing
   * version make none (`created: false`). With `base`, refused (409) if the head has moved since.
   */
  replace(id: string, input: ReplaceCasesInput, options: CallOptions = {}): Promise<SavedDataset> {
    return this.call("PUT", path(id), { body: input, idempotent: false, signal: options.signal });
  }

  /**
   * A new version: the head's cases, then these (`POST /api/v2/datasets/{id}/cases`). How a dataset larger
   * than one request is built.
   *
   * @example
   * ```ts
   * const saved = await client.datasets.append(id, { cases: [{ vars: { customer: "Cy" } }], message: "one more" });
   * ```
   */
  append(id: string, input: AppendCasesInput, options: CallOptions = {}): Promise<SavedDataset> {
    return this.call("POST", path(id, "/cases"), { body: input, idempotent: false, signal: options.signal });
  }

  /** Renames or describes a dataset: not content, no version (`PATCH /api/v2/datasets/{id}`). */
  update(id: string, input: UpdateDatasetInput, options: CallOptions = {}): Promise<DatasetList["datasets"][number]> {
    return this.call("PATCH", path(id), { body: input, idempotent: false, signal: options.signal });
  }

  /** Deletes a dataset with every version and case (`DELETE /api/v2/datasets/{id}`). */
  delete(id: string, options: CallOptions = {}): Promise<DeletedDataset> {
    return this.call("DELETE", path(id), { idempotent: false, signal: options.signal });
  }

  /** The dataset's versions, newest first (`GET /api/v2/datasets/{id}/versions`). */
  versions(id: string, options: CallOptions = {}): Promise<DatasetVersions> {
    return this.call("GET", path(id, "/versions"), { idempotent: true, signal: options.signal });
  }

  /**
   * One page of a version's cases, in order, after the position `after` (`GET /api/v2/datasets/{id}/cases`);
   * `next_after` continues, null on the last page. See {@link Datasets.casesAll} for every case.
   */
  cases(id: string, query: DatasetCasesQuery = {}, options: CallOptions = {}): Promise<DatasetCasesPage> {
    return this.call("GET", path(id, "/cases"), { query, idempotent: true, signal: options.signal });
  }

  /**
   * Every case of a version, page by page (`limit` a request, 1 000 by default): the head when the first page
   * is read, held to that version to the end even if the dataset changes meanwhile.
   *
   * @example
   * ```ts
   * for await (const { position, id, case: c } of client.datasets.casesAll(datasetId)) console.log(position, c.vars);
   * ```
   */
  async *casesAll(
    id: string,
    query: Omit<DatasetCasesQuery, "after"> = {},
    options: CallOptions = {},
  ): AsyncGenerator<DatasetCaseEntry, void, undefined> {
    let version = query.version;
    let after: number | undefined;
    do {
      const page = await this.cases(id, { limit: 1000, ...query, version, after }, options);
      version = page.version;
      yield* page.cases;
      after = page.next_after ?? undefined;
    } while (after !== undefined);
  }

  /**
   * A version's cases (the head unless `version` names one) streamed from `GET /api/v2/datasets/{id}/export`,
   * one parsed case at a time: a dataset of any size is never held whole.
   *
   * @example
   * ```ts
   * const exported = await client.datasets.export(datasetId);
   * for await (const c of exported.cases) console.log(JSON.stringify(c));
   * ```
   */
  async export(id: string, options: CallOptions & { version?: string } = {}): Promise<DatasetExport> {
    const streamed = await openStreamed(this.http, path(id, "/export"), {
      query: { version: options.version },
      accept: "application/x-ndjson",
      idleMs: this.http.timeoutMs,
      signals: [options.signal, this.closed],
    });
    async function* cases(): AsyncGenerator<DatasetCase, void, undefined> {
      try {
        for await (const line of lines(streamed.chunks)) if (line !== "") yield JSON.parse(line) as DatasetCase;
      } finally {
        await streamed.chunks.return();
      }
    }
    return {
      id,
      version: streamed.res.headers.get("x-dataset-version") ?? "",
      count: Number(streamed.res.headers.get("x-dataset-cases") ?? "0"),
      cases: cases(),
    };
  }

  /**
   * Creates a dataset whose first version is a file, JSONL or CSV (`POST /api/v2/datasets/import`): read by
   * the server as it arrives, so it may be larger than a JSON request (up to the server's import bound).
   *
   * @example
   * ```ts
   * import { readFile } from "node:fs/promises";
   * const created = await client.datasets.import(await readFile("cases.csv", "utf8"), { name: "From CSV", format: "csv" });
   * ```
   */
  import(
    file: RawBody,
    options: DatasetImportOptions & { name: string; description?: string },
  ): Promise<CreatedDataset> {
    const { format = "jsonl", name, description, message, signal } = options;
    return this.call("POST", "/api/v2/datasets/import", {
      query: { name, description, message },
      raw: { data: file, type: CONTENT_TYPES[format] },
      idempotent: false,
      signal,
    });
  }

  /**
   * A new version of a dataset from a file (`POST /api/v2/datasets/{id}/import`): its cases replace the
   * head's (`mode: "replace"`, the default) or follow them (`"append"`). A bad line refuses the whole file
   * (`line 12: …`) and stores nothing.
   */
  importInto(
    id: string,
    file: RawBody,
    options: DatasetImportOptions & { mode?: "replace" | "append"; base?: string } = {},
  ): Promise<SavedDataset> {
    const { format = "jsonl", mode, message, base, signal } = options;
    return this.call("POST", path(id, "/import"), {
      query: { mode, message, base },
      raw: { data: file, type: CONTENT_TYPES[format] },
      idempotent: false,
      signal,
    });
  }

  private async call<T>(method: string, route: string, options: Parameters<typeof request>[3]): Promise<T> {
    return (await request<T>(this.http, method, route, options)).data as T;
  }
}
