import { badRequest, conflict, notFound } from "@promptstore/core/errors";
import { type NormalCase, normalCase } from "@promptstore/core/evaluations/cases";
import {
  type AppendCasesBody,
  type CreateDatasetBody,
  DATASET_ID,
  DATASET_PAGE,
  type ReplaceCasesBody,
  type UpdateDatasetBody,
} from "@promptstore/core/evaluations/dataset-api";
import type {
  CaseView,
  CreatedDataset,
  DatasetListItem,
  DatasetVersionView,
  DatasetView,
  SavedDataset,
} from "@promptstore/core/evaluations/dataset-views";
import { HASH_OR_PREFIX } from "@promptstore/core/version-ref";
import type { DatasetRow, DatasetStore, DatasetVersionRow, StoredCase } from "../../store/evaluations/datasets.js";
import { newId, now } from "../../store/ids.js";
import { type Caller, requireAccess } from "../access.js";
import { authorShownTo } from "../authors.js";
import { type BuildPlan, buildVersion, datasetAudit, type Labeled, PAGE_CASES } from "./dataset-build.js";
import type { ImportFormat } from "./dataset-files.js";
import { checkedFileCases, type DatasetSourceOptions, fromExamples, iterate } from "./dataset-sources.js";

export type {
  CaseView,
  CreatedDataset,
  DatasetListItem,
  DatasetVersionView,
  DatasetView,
  SavedDataset,
} from "@promptstore/core/evaluations/dataset-views";

/** A dataset version named for an evaluation: what the runner reads. */
export interface ResolvedDataset {
  id: string;
  version: string;
  case_count: number;
}

/**
 * Decides whether a dataset may be deleted: a refusal's words (a 409), or undefined. The hook through which a
 * label's gate (the issue after 38) will keep the dataset it names; none is registered today.
 */
export type DatasetDeletionGuard = (projectId: string, datasetId: string) => Promise<string | undefined>;

export interface DatasetServiceOptions extends DatasetSourceOptions {
  /** The most cases one version may hold (PROMPTSTORE_DATASET_MAX_CASES). */
  maxCases: number;
  /** Bytes one import may hold (PROMPTSTORE_DATASET_MAX_IMPORT_BYTES). */
  maxImportBytes: number;
  /** Asked before every deletion, in order; the first refusal wins. */
  deletionGuards?: DatasetDeletionGuard[];
  /** A stage older than this is a build that died (default: an hour). */
  staleStageMs?: number;
}

/** A page of `GET …/cases` stops here even below its limit (at least one case is always sent). */
const ANSWER_BYTES = 4 * 1024 * 1024;
const HOUR = 3_600_000;

const datasetNotFound = (id: string) => notFound(`dataset ${id.slice(0, 64)} not found`);

function listItem(row: DatasetRow & { case_count: number | null }): DatasetListItem {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    version: row.head as string,
    cases: Number(row.case_count ?? 0),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Datasets (docs/evaluations.md, "Datasets"): named, project-level lists of test cases, content-addressed
 * like prompts. Every version is built in a stage of the store, page by page, hashed as it is written, and
 * then named by its hash (an existing hash makes no new version), so a dataset of any size is never held
 * whole: not from a request body, not from an import, not for an export. Reads need `read`, every change
 * `write`, on every surface.
 */
export class DatasetService {
  private readonly maxCases: number;
  private readonly staleMs: number;

  constructor(
    readonly store: DatasetStore,
    private readonly options: DatasetServiceOptions,
  ) {
    this.maxCases = options.maxCases;
    this.staleMs = options.staleStageMs ?? HOUR;
  }

  // ---- reads

  async list(caller: Caller): Promise<{ datasets: DatasetListItem[] }> {
    requireAccess(caller, "read", "reading datasets");
    return { datasets: (await this.store.list(caller.projectId)).map(listItem) };
  }

  async get(caller: Caller, id: string, ref?: string): Promise<DatasetView> {
    requireAccess(caller, "read", "reading datasets");
    const dataset = await this.requireDataset(caller, id);
    const version = await this.versionOf(dataset, ref, "version");
    return {
      id: dataset.id,
      name: dataset.name,
      description: dataset.description,
      head: dataset.head as string,
      ...this.versionView(caller, version),
      created_at: dataset.created_at,
      updated_at: dataset.updated_at,
    };
  }

  async versions(caller: Caller, id: string): Promise<{ id: string; head: string; versions: DatasetVersionView[] }> {
    requireAccess(caller, "read", "reading datasets");
    const dataset = await this.requireDataset(caller, id);
    const rows = await this.store.versions(dataset.id);
    return { id: dataset.id, head: dataset.head as string, versions: rows.map((r) => this.versionView(caller, r)) };
  }

  /** A page of a version's cases in order, from after the position `after`; `next_after` continues. */
  async cases(
    caller: Caller,
    id: string,
    query: { version?: string | undefined; after?: number | undefined; limit?: number | undefined },
  ): Promise<{ id: string; version: string; cases: CaseView[]; next_after: number | null }> {
    requireAccess(caller, "read", "reading datasets");
    const dataset = await this.requireDataset(caller, id);
    const version = await this.versionOf(dataset, query.version, "version");
    const limit = query.limit ?? DATASET_PAGE.default;
    const rows = await this.store.page(dataset.id, version.hash, query.after ?? -1, limit);
    const cases: CaseView[] = [];
    let bytes = 0;
    for (const row of rows) {
      if (cases.length > 0 && bytes + row.body.length > ANSWER_BYTES) break;
      bytes += row.body.length;
      cases.push({ position: row.position, id: row.case_id, case: JSON.parse(row.body) as NormalCase });
    }
    const last = cases[cases.length - 1];
    const more = last !== undefined && last.position < version.case_count - 1;
    return { id: dataset.id, version: version.hash, cases, next_after: more ? last.position : null };
  }

  /**
   * A version as JSONL: its canonical cases, one a line, read from the store a page at a time as the
   * consumer pulls. Everything that can be refused is refused before the first line.
   */
  async exportLines(
    caller: Caller,
    id: string,
    ref?: string,
  ): Promise<{ id: string; version: string; cases: number; lines: AsyncGenerator<string> }> {
    requireAccess(caller, "read", "reading datasets");
    const dataset = await this.requireDataset(caller, id);
    const version = await this.versionOf(dataset, ref, "version");
    const store = this.store;
    async function* lines(): AsyncGenerator<string> {
      let after = -1;
      for (;;) {
        const page = await store.page(dataset.id, version.hash, after, PAGE_CASES);
        if (page.length === 0) return;
        // One string per page: fewer, larger writes; the stream's buffer still bounds what waits.
        yield page.map((c) => `${c.body}\n`).join("");
        after = (page[page.length - 1] as StoredCase & { position: number }).position;
      }
    }
    return { id: dataset.id, version: version.hash, cases: version.case_count, lines: lines() };
  }

  /**
   * A dataset named for an evaluation: `<id>` (its head) or `<id>@<version or unique prefix>`. Refusals name
   * the field `dataset`.
   */
  async resolve(caller: Caller, ref: string): Promise<ResolvedDataset> {
    requireAccess(caller, "read", "reading datasets");
    const at = ref.indexOf("@");
    const id = at === -1 ? ref : ref.slice(0, at);
    const versionRef = at === -1 ? undefined : ref.slice(at + 1);
    if (!DATASET_ID.test(id) || (versionRef !== undefined && !HASH_OR_PREFIX.test(versionRef))) {
      throw badRequest('dataset: must be "<dataset id>" or "<dataset id>@<version hash or prefix of 7+ characters>"');
    }
    const dataset = await this.store.find(caller.projectId, id);
    if (!dataset || dataset.head === null) throw notFound(`dataset: ${id} not found`);
    const version = await this.versionOf(dataset, versionRef, "dataset");
    return { id: dataset.id, version: version.hash, case_count: version.case_count };
  }

  // ---- changes

  async create(caller: Caller, body: CreateDatasetBody): Promise<CreatedDataset> {
    requireAccess(caller, "write", "creating datasets");
    let cases: Labeled[];
    let examples: number | undefined;
    if (body.from_examples !== undefined) {
      const found = await fromExamples(this.options.examplesOf, caller, body.from_examples);
      cases = found.cases;
      examples = found.examples;
    } else {
      cases = (body.cases ?? []).map((c, i) => ({ label: `cases[${i}]`, value: normalCase(c) }));
    }
    const dataset = await this.insertDataset(caller, body.name, body.description ?? null);
    const built = await this.buildNew(caller, dataset, iterate(cases), {
      first: true,
      expectHead: null,
      message: body.message ?? null,
      labelOf: (i) => cases[i]?.label ?? `cases[${i}]`,
    });
    return {
      id: dataset.id,
      name: dataset.name,
      version: built.version,
      cases: built.cases,
      ...(examples === undefined ? {} : { examples }),
    };
  }

  /** A new version holding exactly these cases. Identical cases to an existing version make none. */
  async replace(caller: Caller, id: string, body: ReplaceCasesBody): Promise<SavedDataset> {
    requireAccess(caller, "write", "saving dataset versions");
    const dataset = await this.requireDataset(caller, id);
    requireBase(dataset, body.base);
    const cases = body.cases.map((c, i) => ({ label: `cases[${i}]`, value: normalCase(c) }));
    return this.build(caller, dataset, iterate(cases), {
      expectHead: body.base,
      message: body.message ?? null,
      labelOf: (i) => `cases[${i}]`,
    });
  }

  /** A new version: the head's cases, then these. The way to build a dataset larger than one request. */
  async append(caller: Caller, id: string, body: AppendCasesBody): Promise<SavedDataset> {
    requireAccess(caller, "write", "saving dataset versions");
    const dataset = await this.requireDataset(caller, id);
    requireBase(dataset, body.base);
    const cases = body.cases.map((c, i) => ({ label: `cases[${i}]`, value: normalCase(c) }));
    return this.build(caller, dataset, iterate(cases), {
      base: await this.headVersion(dataset),
      expectHead: dataset.head,
      message: body.message ?? null,
      labelOf: (i) => `cases[${i}]`,
    });
  }

  /**
   * A file streamed into a new version of an existing dataset: replacing its cases, or appended to the head's.
   * The file is read as it arrives; a bad line refuses the whole import (`line 12: …`) and stores nothing.
   */
  async importInto(
    caller: Caller,
    id: string,
    file: { format: ImportFormat; source: AsyncIterable<Buffer> },
    query: { mode?: "replace" | "append" | undefined; message?: string | undefined; base?: string | undefined },
  ): Promise<SavedDataset> {
    requireAccess(caller, "write", "importing datasets");
    const dataset = await this.requireDataset(caller, id);
    requireBase(dataset, query.base);
    const append = query.mode === "append";
    const lines: number[] = [];
    return this.build(caller, dataset, checkedFileCases(file, lines, this.options.maxImportBytes), {
      base: append ? await this.headVersion(dataset) : undefined,
      expectHead: append ? dataset.head : query.base,
      message: query.message ?? null,
      labelOf: (i) => `line ${lines[i]}`,
    });
  }

  /** A new dataset whose first version is a file streamed to the server. */
  async createFromFile(
    caller: Caller,
    query: { name: string; description?: string | undefined; message?: string | undefined },
    file: { format: ImportFormat; source: AsyncIterable<Buffer> },
  ): Promise<CreatedDataset> {
    requireAccess(caller, "write", "importing datasets");
    const dataset = await this.insertDataset(caller, query.name, query.description ?? null);
    const lines: number[] = [];
    const built = await this.buildNew(caller, dataset, checkedFileCases(file, lines, this.options.maxImportBytes), {
      first: true,
      expectHead: null,
      message: query.message ?? null,
      labelOf: (i) => `line ${lines[i]}`,
    });
    return { id: dataset.id, name: dataset.name, version: built.version, cases: built.cases };
  }

  /** Renames or describes the dataset: not content, no version. */
  async update(caller: Caller, id: string, body: UpdateDatasetBody): Promise<DatasetListItem> {
    requireAccess(caller, "write", "changing datasets");
    const dataset = await this.requireDataset(caller, id);
    const patch: Partial<Pick<DatasetRow, "name" | "description">> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.description !== undefined) patch.description = body.description;
    if (patch.name !== undefined && patch.name !== dataset.name) await this.requireFreeName(caller, patch.name);
    const at = now();
    const audit = [datasetAudit(caller, "dataset.updated", dataset.id, dataset.name, patch.name ?? dataset.name, at)];
    let done: boolean;
    try {
      done = await this.store.update(caller.projectId, dataset.id, patch, at, audit);
    } catch (error) {
      // Another request took the name between the check and the update: the unique index said so.
      if (patch.name !== undefined) await this.requireFreeName(caller, patch.name, dataset.id);
      throw error;
    }
    if (!done) throw datasetNotFound(id);
    const head = await this.headVersion(dataset);
    return listItem({ ...dataset, ...patch, updated_at: at, case_count: head.case_count });
  }

  /** Deletes the dataset with every version and case, unless a deletion guard refuses (409). */
  async remove(caller: Caller, id: string): Promise<{ id: string; deleted: true }> {
    requireAccess(caller, "write", "deleting datasets");
    const dataset = await this.requireDataset(caller, id);
    // The gates of labels (the issue after 38) will refuse here while one names this dataset.
    for (const guard of this.options.deletionGuards ?? []) {
      const refusal = await guard(caller.projectId, dataset.id);
      if (refusal !== undefined) throw conflict(refusal);
    }
    const audit = [datasetAudit(caller, "dataset.deleted", dataset.id, dataset.head, null, now())];
    if (!(await this.store.remove(caller.projectId, dataset.id, audit))) throw datasetNotFound(id);
    return { id: dataset.id, deleted: true };
  }

  // ---- housekeeping

  /**
   * Drops what builds that died left (stages older than an hour, and datasets whose first import never
   * finished) across the store. Run once at start-up; each build also sweeps its own dataset first.
   */
  async sweepAll(): Promise<void> {
    const cutoff = Date.now() - this.staleMs;
    for (const row of await this.store.unbuiltBefore(new Date(cutoff).toISOString())) {
      await this.store.remove(row.project_id, row.id);
    }
    for (const id of await this.store.allIds()) await this.sweep(id);
  }

  private async sweep(datasetId: string): Promise<void> {
    if ((await this.store.sweepStages(datasetId, Date.now() - this.staleMs)) > 0) {
      await this.store.deleteOrphanCases(datasetId);
    }
  }

  // ---- the pieces

  private async requireDataset(caller: Caller, id: string): Promise<DatasetRow> {
    const row = DATASET_ID.test(id) ? await this.store.find(caller.projectId, id) : undefined;
    // One whose first version is still being imported is not there yet.
    if (!row || row.head === null) throw datasetNotFound(id);
    return row;
  }

  private async headVersion(dataset: DatasetRow): Promise<DatasetVersionRow> {
    const row = await this.store.version(dataset.id, dataset.head as string);
    if (!row) throw datasetNotFound(dataset.id);
    return row;
  }

  /** The head, or a version by full hash or unique prefix; refusals name `field`. */
  private async versionOf(dataset: DatasetRow, ref: string | undefined, field: string): Promise<DatasetVersionRow> {
    const matches = ref === undefined ? [dataset.head as string] : await this.store.versionsByPrefix(dataset.id, ref);
    if (matches.length === 0) throw notFound(`${field}: no version of dataset ${dataset.id} matches ${ref}`);
    if (matches.length > 1) {
      throw conflict(`${field}: ${ref} matches more than one version of dataset ${dataset.id}; give more characters`);
    }
    const row = await this.store.version(dataset.id, matches[0] as string);
    if (!row) throw notFound(`${field}: no version of dataset ${dataset.id} matches ${ref}`);
    return row;
  }

  private versionView(caller: Caller, row: DatasetVersionRow): DatasetVersionView {
    return {
      version: row.hash,
      cases: Number(row.case_count),
      parent: row.parent,
      message: row.message,
      saved_at: row.created_at,
      saved_by: authorShownTo(caller, row.created_by),
    };
  }

  private async requireFreeName(caller: Caller, name: string, except?: string): Promise<void> {
    const taken = await this.store.findByName(caller.projectId, name);
    if (taken && taken.id !== except) {
      throw conflict(`name: this project already has a dataset named ${JSON.stringify(name)}`);
    }
  }

  /**
   * Inserts the dataset row, without a version yet (head null: not listed, not found). A name held by a
   * first import that died more than an hour ago is taken over.
   */
  private async insertDataset(caller: Caller, name: string, description: string | null): Promise<DatasetRow> {
    const at = now();
    const row: DatasetRow = {
      id: newId("ds"),
      project_id: caller.projectId,
      name,
      description,
      head: null,
      created_at: at,
      updated_at: at,
    };
    if (await this.store.create(row)) return row;
    const holder = await this.store.findByName(caller.projectId, name);
    const stale = new Date(Date.now() - this.staleMs).toISOString();
    if (holder && holder.head === null && holder.created_at < stale) {
      await this.store.remove(caller.projectId, holder.id);
      if (await this.store.create(row)) return row;
    }
    throw conflict(`name: this project already has a dataset named ${JSON.stringify(name)}`);
  }

  /** Writes a version (dataset-build.ts), after sweeping what dead builds of this dataset left. */
  private build(caller: Caller, dataset: DatasetRow, input: AsyncIterable<Labeled>, plan: BuildPlan) {
    return buildVersion(this.store, caller, dataset, input, plan, {
      maxCases: this.maxCases,
      sweep: (id) => this.sweep(id),
    });
  }

  /** Builds a new dataset's first version; the dataset goes again when that fails. */
  private async buildNew(caller: Caller, dataset: DatasetRow, input: AsyncIterable<Labeled>, plan: BuildPlan) {
    try {
      return await this.build(caller, dataset, input, plan);
    } catch (error) {
      await this.store.remove(caller.projectId, dataset.id);
      throw error;
    }
  }
}

function requireBase(dataset: DatasetRow, base: string | undefined): void {
  if (base !== undefined && dataset.head !== base) {
    throw conflict(`base: the dataset changed since this edit began; its head is now ${dataset.head}`);
  }
}
