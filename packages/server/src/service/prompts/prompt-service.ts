import type { DashboardPromptItem } from "@promptstore/core/dashboard";
import { AppError, conflict, notFound } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import { type ContentLimits, DEFAULT_CONTENT_LIMITS } from "@promptstore/core/prompts/content-limits";
import { slugCandidate, slugify } from "@promptstore/core/prompts/slug";
import {
  type CreatePromptBody,
  type ImportPromptBody,
  type ReadOptions,
  readDefaults,
  type SaveVersionBody,
} from "@promptstore/core/schemas";
import type {
  CreatedPrompt,
  DeletedPrompt,
  ImportedPrompt,
  PromptList,
  PromptListItem,
  PromptView,
  PublishedVersion,
  ReleaseView,
  RemovedLabel,
  SavedVersion,
  VersionList,
} from "@promptstore/core/views";
import { now } from "../../store/ids.js";
import type { Store } from "../../store/index.js";
import type { LabelSettings } from "../../store/prompts/labels.js";
import type { PromptRow } from "../../store/prompts/prompt-rows.js";
import { type EventSink, ProjectStore } from "../../store/prompts/prompts.js";
import { type Caller, requireAccess } from "../access.js";
import { authorShownTo } from "../authors.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import type { ChangeBus } from "../events/change-bus.js";
import { endRollout, labelState, moveLabel, requireUnprotected } from "./label-moves.js";
import {
  PromptChange,
  requirePrompt,
  requireWrite,
  reservePromptSlot,
  resolveHash,
  writtenVersion,
} from "./prompt-changes.js";
import { importPrompt } from "./prompt-import.js";
import {
  collect,
  dashboardPages,
  type ListPage,
  labelled,
  listPages,
  type SearchPage,
  searchPage,
} from "./prompt-pages.js";
import { type PromptRead, PromptReader, pick, type ResolvedRead } from "./prompt-reads.js";
import {
  cancelReleasesOf,
  configureLabel,
  decideRelease,
  getRelease,
  labelSettings,
  listReleases,
  type ReleaseContext,
  requestRelease,
} from "./releases.js";
import { guardJson } from "./version-document.js";

export type { PromptRead, ResolvedRead } from "./prompt-reads.js";

const MAX_SLUG_ATTEMPTS = 1000;

/**
 * The one module through which every read and mutation of prompts passes: HTTP, MCP, the CLI and the
 * dashboard call it, never the store. It owns transactions and tells listeners (caches) after commit.
 */
export class PromptService {
  /** Reads that reached the database, for tests and metrics: what a cache in front of `read` saves. */
  reads = 0;
  private readonly reader: PromptReader;
  private readonly sinks: EventSink[] = [];
  /** How long written text may be: the server's configuration, the same for every surface. */
  readonly limits: ContentLimits;

  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
    options: { guardText: string; limits?: ContentLimits },
  ) {
    this.reader = new PromptReader(guardJson(options.guardText));
    this.limits = options.limits ?? DEFAULT_CONTENT_LIMITS;
  }

  /** Hands every change's events to `sink` inside the change's transaction (webhook deliveries). */
  addEventSink(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /** Called after commit, never before: a cache told early could refill from the old row. */
  private changed(projectId: string, promptId: string): void {
    this.bus.publish({ kind: "prompt", projectId, promptId });
  }

  /**
   * Records a change inside its transaction: the audit rows, the events (which the sinks queue for webhooks),
   * and the announcement that tells other instances once it commits.
   */
  private async record(tx: ProjectStore, change: PromptChange): Promise<void> {
    await tx.recordAudit(change.audit);
    await tx.recordEvents(change.events, this.sinks);
    await tx.announceChange(change.promptId);
  }

  private projectStore(caller: Caller): ProjectStore {
    return new ProjectStore(this.store.db, this.store.queries, this.store.channel, this.store.events, caller.projectId);
  }

  async list(
    caller: Caller,
    page: { limit?: number | undefined; cursor?: string | undefined } = {},
  ): Promise<PromptList> {
    const paginated = page.limit !== undefined || page.cursor !== undefined;
    const after = page.cursor !== undefined ? decodeCursor(page.cursor) : undefined;
    const limit = paginated ? (page.limit ?? 100) : undefined;
    const store = this.projectStore(caller);
    const project = { id: caller.projectId, name: caller.projectName };
    // Unpaged (MCP's list_prompts): read page by page, taking turns of the event loop as the streamed list does.
    if (limit === undefined) return { project, prompts: await collect(listPages(store)) };
    const rows = await store.listPrompts({ after, limit: limit + 1 });
    const prompts = await withLabels(store, rows.slice(0, limit));
    const result: PromptList = { project, prompts };
    if (limit !== undefined) {
      const last = prompts[prompts.length - 1];
      result.next_cursor = rows.length > limit && last ? encodeCursor(last) : null;
    }
    return result;
  }

  async read(caller: Caller, promptId: string, options: ReadOptions = {}): Promise<PromptView> {
    return toView(await this.readDocument(caller, promptId, options));
  }

  /**
   * A read as stored, one arm chosen (by `assign`, else at random) when the label that serves has a
   * rollout: the hot path's single query, and one more for a label, a prefix or a rollout's candidate.
   */
  async readDocument(caller: Caller, promptId: string, options: ReadOptions = {}): Promise<PromptRead> {
    return pick(await this.resolveRead(caller, promptId, options), promptId, options.assign);
  }

  /** A read with both arms of a rollout, for a cache that chooses per request. */
  async resolveRead(caller: Caller, promptId: string, options: ReadOptions = {}): Promise<ResolvedRead> {
    this.reads++;
    const { version, guard } = readDefaults(options);
    return this.reader.resolve(this.projectStore(caller), promptId, version, guard);
  }

  /**
   * An unpaged list page by page, for an answer streamed as it is read (prompt-pages.ts); the items are those
   * `list` without a limit gives.
   */
  listPages(caller: Caller): AsyncGenerator<ListPage<PromptListItem>> {
    return listPages(this.projectStore(caller));
  }

  /** Every prompt with the variables of the version it serves (production, else latest), read page by page. */
  async listWithVariables(caller: Caller): Promise<DashboardPromptItem[]> {
    return collect(dashboardPages(this.projectStore(caller)));
  }

  /** One page of the dashboard's list among the prompts whose name or id holds `q` ("" for all). */
  async searchPage(
    caller: Caller,
    q: string,
    page: number,
    perPage: number,
    signal?: AbortSignal,
  ): Promise<SearchPage> {
    return searchPage(this.projectStore(caller), q, page, perPage, { signal });
  }

  /** `listWithVariables` page by page, for the dashboard's streamed answer. */
  listWithVariablesPages(caller: Caller): AsyncGenerator<ListPage<DashboardPromptItem>> {
    return dashboardPages(this.projectStore(caller));
  }

  async listVersions(caller: Caller, promptId: string): Promise<VersionList> {
    const store = this.projectStore(caller);
    const prompt = await requirePrompt(store, promptId);
    const versions = await store.listVersions(promptId);
    const labels = (await withLabels(store, [prompt]))[0]?.labels ?? {};
    const onVersion = (hash: string): Record<string, string> =>
      Object.fromEntries(Object.entries(labels).filter(([, version]) => version === hash));
    return {
      id: prompt.id,
      production_version: prompt.production_version,
      latest_version: prompt.latest_version,
      versions: versions.map((v) => ({
        version: v.hash,
        message: v.message,
        created_at: v.created_at,
        saved_by: authorShownTo(caller, v.saved_by),
        labels: onVersion(v.hash),
      })),
      labels,
    };
  }

  async create(caller: Caller, body: CreatePromptBody): Promise<CreatedPrompt> {
    requireWrite(caller, body.publish === true, "creating a prompt", "creating a published prompt");
    const timestamp = now();
    const version = writtenVersion(caller, body, timestamp, this.limits);
    const { hash } = version;
    const publish = body.publish ?? false;

    const id = await this.projectStore(caller).transaction(async (tx) => {
      if (publish) await requireUnprotected(tx, body.id ?? slugify(body.name), [PRODUCTION], "publishing");
      await reservePromptSlot(tx, caller);
      const row: PromptRow = {
        id: "",
        name: body.name,
        description: body.description ?? "",
        production_version: publish ? hash : null,
        latest_version: hash,
        created_at: timestamp,
        updated_at: timestamp,
      };
      const promptId = await this.insertWithFreeId(tx, row, body.id);
      await tx.insertVersion(promptId, version);
      const change = new PromptChange(caller, promptId, timestamp)
        .audited("prompt.created", null, hash)
        .event("prompt.created", hash, row.production_version, hash);
      if (publish) change.audited("prompt.published", null, hash);
      await this.record(tx, change);
      return promptId;
    });
    this.changed(caller.projectId, id);
    return { id, name: body.name, version: hash, published: publish, created_at: timestamp };
  }

  private async insertWithFreeId(tx: ProjectStore, row: PromptRow, requested: string | undefined): Promise<string> {
    if (requested !== undefined) {
      if (await tx.insertPrompt({ ...row, id: requested })) return requested;
      throw conflict(`id: a prompt with id ${requested} already exists in this project`);
    }
    const base = slugify(row.name);
    const taken = await tx.promptIdsStartingWith(base);
    for (let n = 1; n <= MAX_SLUG_ATTEMPTS; n++) {
      const candidate = slugCandidate(base, n);
      // The insert, not the read above, decides: a concurrent create may have taken the id since.
      if (!taken.has(candidate) && (await tx.insertPrompt({ ...row, id: candidate }))) return candidate;
    }
    throw conflict("id: could not derive a free id from name; pass an explicit id");
  }

  async save(caller: Caller, promptId: string, body: SaveVersionBody): Promise<SavedVersion> {
    requireWrite(caller, body.publish === true, "saving a version", "saving and publishing");
    const timestamp = now();
    const version = writtenVersion(caller, body, timestamp, this.limits);
    const { hash } = version;
    const publish = body.publish ?? false;

    const created = await this.projectStore(caller).transaction(async (tx) => {
      // The row lock first: a deletion in progress is waited for and then seen (404), never half-seen (a
      // version inserted for a prompt that is gone); and two editors who started from the same version are
      // serialized, so the second sees the first's save and is told (base_version).
      await tx.lockPrompt(promptId);
      const current = await requirePrompt(tx, promptId);
      if (publish) await requireUnprotected(tx, promptId, [PRODUCTION], "saving with publish");
      if (body.base_version !== undefined && current.latest_version !== body.base_version) {
        throw conflict(
          `base_version: the prompt changed since this edit began; latest is now ${current.latest_version}`,
        );
      }
      const isNew = await tx.insertVersion(promptId, version);
      const patch = {
        ...(isNew ? { latest_version: hash } : {}),
        ...(publish ? { production_version: hash } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
      };
      const latest = isNew ? hash : current.latest_version;
      const production = publish ? hash : current.production_version;
      const change = new PromptChange(caller, promptId, timestamp);
      if (isNew) {
        change
          .event("prompt.version_saved", hash, current.production_version, hash)
          .audited("prompt.saved", current.latest_version, hash);
      }
      if (production !== current.production_version) {
        change
          .event("prompt.published", hash, production, latest)
          .audited("prompt.published", current.production_version, production);
      }
      // Publishing moves production whole: a rollout on it ends here.
      if (publish) await endRollout(tx, change, { ...current, latest_version: latest }, PRODUCTION);
      if (Object.keys(patch).length > 0) {
        await tx.updatePrompt(promptId, { ...patch, updated_at: timestamp });
        await this.record(tx, change);
      }
      return isNew;
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, version: hash, created, published: publish };
  }

  /**
   * Points a label (production unless told) at a version, or starts, changes, completes or aborts a rollout
   * on it (`percent`). A protected label is refused: it moves only through an approved release request.
   */
  async publish(
    caller: Caller,
    promptId: string,
    ref = "latest",
    options: { label?: string | undefined; percent?: number | undefined } = {},
  ): Promise<PublishedVersion> {
    const label = options.label ?? PRODUCTION;
    requireAccess(caller, "publish", label === PRODUCTION ? "publishing" : `moving label ${label}`);
    const state = await this.projectStore(caller).transaction(async (tx) => {
      // Locked first, like save: a publish racing a deletion is a 404, not an event about a deleted prompt.
      await tx.lockPrompt(promptId);
      const prompt = await requirePrompt(tx, promptId);
      await requireUnprotected(tx, promptId, [label], "moving it");
      const target = ref === "latest" ? prompt.latest_version : await resolveHash(tx, promptId, ref);
      const timestamp = now();
      const change = new PromptChange(caller, promptId, timestamp);
      const moved = await moveLabel(tx, change, prompt, { label, target, percent: options.percent }, timestamp);
      // Publishing what the label already serves records nothing, but is still announced.
      await this.record(tx, change);
      return moved;
    });
    this.changed(caller.projectId, promptId);
    const published: PublishedVersion = {
      id: promptId,
      version: state.rollout ? state.rollout.candidate : (state.version as string),
      published: true,
      label,
    };
    if (state.rollout) published.rollout = state.rollout;
    return published;
  }

  /** Removes a label (not production) from a prompt; a protected one is refused like a move. */
  async removeLabel(caller: Caller, promptId: string, label: string): Promise<RemovedLabel> {
    requireAccess(caller, "publish", `removing label ${label}`);
    if (label === PRODUCTION) {
      throw new AppError("forbidden", "label: production cannot be removed; publish another version instead");
    }
    await this.projectStore(caller).transaction(async (tx) => {
      await tx.lockPrompt(promptId);
      const prompt = await requirePrompt(tx, promptId);
      await requireUnprotected(tx, promptId, [label], "removing it");
      const { version, rollout } = await labelState(tx, prompt, label);
      if (version === null) throw notFound(`label: prompt ${promptId} has no version labelled ${label}`);
      const timestamp = now();
      const labels = tx.labels();
      await labels.removeLabel(promptId, label);
      if (rollout) await labels.clearRollout(promptId, label);
      await tx.updatePrompt(promptId, { updated_at: timestamp });
      const change = new PromptChange(caller, promptId, timestamp)
        .audited("label.removed", version, null, `${promptId}:${label}`)
        .event("prompt.label_removed", version, prompt.production_version, prompt.latest_version, {
          label,
          previous_version: version,
          rollout: null,
        });
      await this.record(tx, change);
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, label, removed: true };
  }

  /**
   * Deletes a prompt with all its versions, sections and tools, and gives its slot back to the plan, in one
   * transaction that also records `prompt.deleted` (whose `version` is what production served, else
   * latest). The id is free again at once; a new prompt with it starts with no history.
   */
  async delete(caller: Caller, promptId: string): Promise<DeletedPrompt> {
    // As strong as a publish: it changes what production serves (to nothing).
    requireAccess(caller, "publish", "deleting a prompt");
    await this.projectStore(caller).transaction(async (tx) => {
      // The project row first, then the prompt's: the order a create takes them in. Given back for nothing
      // when the prompt is not there: the 404 rolls it back.
      await tx.releasePromptSlot();
      await tx.lockPrompt(promptId);
      const prompt = await requirePrompt(tx, promptId);
      const carried = [
        ...(prompt.production_version === null ? [] : [PRODUCTION]),
        ...(await tx.labels().labelsOf(promptId)).keys(),
      ];
      await requireUnprotected(tx, promptId, carried, "deleting the prompt it labels");
      await tx.deletePrompt(promptId);
      const served = prompt.production_version ?? prompt.latest_version;
      const at = now();
      const change = new PromptChange(caller, promptId, at);
      // Its pending release requests end with it: none can be approved for a prompt made again with its id.
      await cancelReleasesOf(tx, change, caller, promptId, at);
      // The audit row goes before the events: anything that fails from there on (a sink) takes it back.
      await this.record(tx, change.audited("prompt.deleted", served, null).event("prompt.deleted", served, null, null));
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, deleted: true };
  }

  /** Asks for a protected label to move (releases.ts); anyone who could publish may ask. */
  requestRelease(caller: Caller, promptId: string, body: Parameters<typeof requestRelease>[3]): Promise<ReleaseView> {
    return requestRelease(this.releaseContext(caller), caller, promptId, body);
  }

  listReleases(caller: Caller, query: Parameters<typeof listReleases>[2]): Promise<{ releases: ReleaseView[] }> {
    return listReleases(this.releaseContext(caller), caller, query);
  }

  getRelease(caller: Caller, id: string): Promise<ReleaseView> {
    return getRelease(this.releaseContext(caller), caller, id);
  }

  /** Approves or rejects a release: a person who may, and who did not ask. */
  decideRelease(caller: Caller, id: string, decision: Parameters<typeof decideRelease>[3]): Promise<ReleaseView> {
    return decideRelease(this.releaseContext(caller), caller, id, decision);
  }

  labelSettings(caller: Caller): ReturnType<typeof labelSettings> {
    return labelSettings(this.releaseContext(caller), caller);
  }

  configureLabel(caller: Caller, name: string, patch: Parameters<typeof configureLabel>[3]): Promise<LabelSettings> {
    return configureLabel(this.releaseContext(caller), caller, name, patch);
  }

  private releaseContext(caller: Caller): ReleaseContext {
    return {
      store: this.projectStore(caller),
      record: (tx, change) => this.record(tx, change),
      changed: (promptId) => this.changed(caller.projectId, promptId),
    };
  }

  /** Adds versions made elsewhere (see prompt-import.ts). */
  async importPrompt(caller: Caller, body: ImportPromptBody): Promise<ImportedPrompt> {
    return importPrompt(
      {
        store: this.projectStore(caller),
        limits: this.limits,
        record: (tx, change) => this.record(tx, change),
        changed: (promptId) => this.changed(caller.projectId, promptId),
      },
      caller,
      body,
    );
  }
}

/** Rows with every label of each (production first when set, then the others by name): one query. */
async function withLabels<T extends PromptRow>(
  store: ProjectStore,
  rows: T[],
): Promise<(T & { labels: Record<string, string> })[]> {
  return labelled(rows, rows.length > 0 ? await store.labels().allLabels() : []);
}

/** The view every surface shares (REST shapes it further; MCP and the dashboard return it as is). */
function toView(read: PromptRead): PromptView {
  const { prompt, document } = read;
  const view: PromptView = {
    id: prompt.id,
    name: prompt.name,
    description: prompt.description,
    prompt: JSON.parse(read.textJson),
    sections: JSON.parse(document.sectionsJson),
    variables: JSON.parse(document.variablesJson),
    version: read.hash,
    label: read.label,
    production_version: prompt.production_version,
    created_at: prompt.created_at,
    updated_at: prompt.updated_at,
  } as PromptView;
  // In the order v2's spliced bytes have them (read-json.ts).
  if (document.toolsJson !== "[]") view.tools = JSON.parse(document.toolsJson);
  if (document.modelJson !== null) view.model = JSON.parse(document.modelJson);
  view.labels = JSON.parse(read.labelsJson);
  if (read.fallbackFor !== undefined) view.fallback_for = read.fallbackFor;
  if (read.rollout !== undefined) view.rollout = read.rollout;
  return view;
}
