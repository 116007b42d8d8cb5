import type { DashboardPromptItem } from "@promptstore/core/dashboard";
import { conflict } from "@promptstore/core/errors";
import type { GateState, RequirementBody } from "@promptstore/core/evaluations/requirements";
import { PRODUCTION } from "@promptstore/core/labels";
import type { Tool } from "@promptstore/core/prompts/content";
import { type ContentLimits, DEFAULT_CONTENT_LIMITS } from "@promptstore/core/prompts/content-limits";
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
  LabelSettingView,
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
import type { PromptRow } from "../../store/prompts/prompt-rows.js";
import { type EventSink, ProjectStore } from "../../store/prompts/prompts.js";
import { type Caller, requireAccess, requirePerson } from "../access.js";
import { authorShownTo } from "../authors.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import type { ChangeBus } from "../events/change-bus.js";
import type { ChangeContext } from "./change-context.js";
import type { ContentInput } from "./content-input.js";
import { IncludeService } from "./includes/include-service.js";
import { pendingVersion } from "./includes/pending-version.js";
import { lockPrompts } from "./includes/resolve.js";
import {
  endRollout,
  type LabelGate,
  labelState,
  moveLabel,
  NO_GATE,
  requireGate,
  requireUnprotected,
} from "./label-moves.js";
import { removeLabel } from "./label-removal.js";
import { PlanService } from "./plans/plan-service.js";
import { PromptChange, requirePrompt, requireWrite, resolveHash } from "./prompt-changes.js";
import { importPrompt } from "./prompt-import.js";
import { createPrompt, deletePrompt } from "./prompt-lifecycle.js";
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
import { ChangeRecorder } from "./prompt-recording.js";
import {
  configureLabel,
  decideRelease,
  getRelease,
  labelSettings,
  labelSettingView,
  listReleases,
  type ReleaseContext,
  requestRelease,
} from "./releases.js";
import { guardJson } from "./version-document.js";

/** What the evaluations domain implements to gate label moves (label-moves.ts), opened through this door. */
export type { LabelGate } from "./label-moves.js";
export type { PromptRead, ResolvedRead } from "./prompt-reads.js";

/**
 * The one module through which every read and mutation of prompts passes: HTTP, MCP, the CLI and the
 * dashboard call it, never the store. It owns transactions and tells listeners (caches) after commit.
 */
export class PromptService {
  /** Reads that reached the database, for tests and metrics: what a cache in front of `read` saves. */
  reads = 0;
  private readonly reader: PromptReader;
  /** Audit rows, events and announcements of every change (prompt-recording.ts). */
  private readonly recorder: ChangeRecorder;
  /** How long written text may be: the server's configuration, the same for every surface. */
  readonly limits: ContentLimits;
  /** Includes seen from either end, and their updates (includes/include-service.ts). */
  readonly includes: IncludeService;
  /** Rollout plans (plans/plan-service.ts): recorded, announced and gated as every change here. */
  readonly plans = new PlanService({
    store: (projectId) => this.projectStore({ projectId } as Caller),
    record: (tx, change) => this.recorder.record(tx, change),
    changed: (projectId, promptId) => this.recorder.changed(projectId, promptId),
    gate: () => this.gate,
    db: () => this.store.db,
  });

  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
    options: { guardText: string; limits?: ContentLimits },
  ) {
    this.reader = new PromptReader(guardJson(options.guardText));
    this.recorder = new ChangeRecorder(store, bus);
    this.limits = options.limits ?? DEFAULT_CONTENT_LIMITS;
    this.includes = new IncludeService({
      store: (caller) => this.projectStore(caller),
      read: (caller, promptId, version) => this.readDocument(caller, promptId, { version, guard: false }),
      save: (caller, promptId, body) => this.save(caller, promptId, body),
      publish: (caller, promptId, version, label) => this.publish(caller, promptId, version, { label }),
      requestRelease: (caller, promptId, body) => this.requestRelease(caller, promptId, body),
    });
  }

  /** The labels' required evaluations (the evaluations domain's); none until one is set. */
  private gate: LabelGate = NO_GATE;

  /** Refuses a required evaluation that could never run (its dataset, connection, checks). */
  private requirementCheck: (caller: Caller, requirement: RequirementBody) => Promise<void> = async () => {};

  setGate(gate: LabelGate, check: (caller: Caller, requirement: RequirementBody) => Promise<void>): void {
    this.gate = gate;
    this.requirementCheck = check;
  }

  /** Where a version stands against a label's required evaluation (null: the label has none). */
  async gateState(caller: Caller, promptId: string, label: string, ref: string): Promise<GateState | null> {
    requireAccess(caller, "read", "reading a label's required evaluation");
    const store = this.projectStore(caller);
    const prompt = await requirePrompt(store, promptId);
    const target = ref === "latest" ? prompt.latest_version : await resolveHash(store, promptId, ref);
    const current = (await labelState(store, prompt, label)).version;
    return this.gate.decide(store, prompt, label, target, current);
  }

  /** Hands every change's events to `sink` inside the change's transaction (webhook deliveries). */
  addEventSink(sink: EventSink): void {
    this.recorder.addSink(sink);
  }

  /** What happened to a prompt beside its versions and labels (an evaluation's start, stop or end): prompt-recording.ts. */
  recordActivity(
    projectId: string,
    promptId: string,
    activity: Parameters<ChangeRecorder["recordActivity"]>[2],
  ): Promise<void> {
    return this.recorder.recordActivity(projectId, promptId, activity);
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

  /**
   * A draft as the version saving it now would make (a playground run of unsaved content): its hash, text
   * and tools, its includes pinned to what they name now. Nothing is written.
   */
  async draftVersion(
    caller: Caller,
    promptId: string,
    input: ContentInput,
  ): Promise<{ hash: string; text: string; tools: Tool[] }> {
    const version = await pendingVersion(caller, input, now(), this.limits).pin(this.projectStore(caller), promptId);
    return { hash: version.hash, text: JSON.parse(version.document.textJson) as string, tools: version.content.tools };
  }

  async create(caller: Caller, body: CreatePromptBody): Promise<CreatedPrompt> {
    return this.recorder.gated(() => createPrompt(this.changeContext(caller), caller, body));
  }

  async save(caller: Caller, promptId: string, body: SaveVersionBody): Promise<SavedVersion> {
    requireWrite(caller, body.publish === true, "saving a version", "saving and publishing");
    const timestamp = now();
    const pending = pendingVersion(caller, body, timestamp, this.limits);
    const publish = body.publish ?? false;

    const { created, hash } = await this.recorder.gated(() =>
      this.projectStore(caller).transaction(async (tx) => {
        // The row lock first: a deletion in progress is waited for and then seen (404), never half-seen (a
        // version inserted for a prompt that is gone); and two editors who started from the same version are
        // serialized, so the second sees the first's save and is told (base_version). The prompts it includes
        // are locked with it (includes/resolve.ts).
        await lockPrompts(tx, [promptId, ...pending.pieces]);
        const current = await requirePrompt(tx, promptId);
        if (publish) await requireUnprotected(tx, promptId, [PRODUCTION], "saving with publish");
        if (body.base_version !== undefined && current.latest_version !== body.base_version) {
          throw conflict(
            `base_version: the prompt changed since this edit began; latest is now ${current.latest_version}`,
          );
        }
        const version = await pending.pin(tx, promptId);
        const { hash } = version;
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
          await requireGate(this.gate, tx, change, current, PRODUCTION, hash, current.production_version);
          change
            .event("prompt.published", hash, production, latest)
            .audited("prompt.published", current.production_version, production);
        }
        // Publishing moves production whole: a rollout on it ends here.
        if (publish) await endRollout(tx, change, { ...current, latest_version: latest }, PRODUCTION);
        if (Object.keys(patch).length > 0) {
          await tx.updatePrompt(promptId, { ...patch, updated_at: timestamp });
          await this.recorder.record(tx, change);
        }
        return { created: isNew, hash };
      }),
    );
    this.recorder.changed(caller.projectId, promptId);
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
    const state = await this.recorder.gated(() =>
      this.projectStore(caller).transaction(async (tx) => {
        // Locked first, like save: a publish racing a deletion is a 404, not an event about a deleted prompt.
        await tx.lockPrompt(promptId);
        const prompt = await requirePrompt(tx, promptId);
        await requireUnprotected(tx, promptId, [label], "moving it");
        const target = ref === "latest" ? prompt.latest_version : await resolveHash(tx, promptId, ref);
        const timestamp = now();
        const change = new PromptChange(caller, promptId, timestamp);
        const moved = await moveLabel(
          tx,
          change,
          prompt,
          { label, target, percent: options.percent },
          timestamp,
          this.gate,
        );
        // Publishing what the label already serves records nothing, but is still announced.
        await this.recorder.record(tx, change);
        return moved;
      }),
    );
    this.recorder.changed(caller.projectId, promptId);
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
    return removeLabel(this.changeContext(caller), caller, promptId, label);
  }

  /**
   * Deletes a prompt with all its versions, sections and tools, and gives its slot back to the plan, in one
   * transaction that also records `prompt.deleted` (whose `version` is what production served, else
   * latest). The id is free again at once; a new prompt with it starts with no history.
   */
  async delete(caller: Caller, promptId: string): Promise<DeletedPrompt> {
    return deletePrompt(this.changeContext(caller), caller, promptId);
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
    return this.recorder.gated(() => decideRelease(this.releaseContext(caller), caller, id, decision));
  }

  labelSettings(caller: Caller): ReturnType<typeof labelSettings> {
    return labelSettings(this.releaseContext(caller), caller);
  }

  /** Changes a label's settings; a required evaluation given is first checked to be one that can run. */
  async configureLabel(
    caller: Caller,
    name: string,
    patch: Parameters<typeof configureLabel>[3],
  ): Promise<Omit<LabelSettingView, "in_use">> {
    if (patch.required_evaluation) {
      requirePerson(caller, "admin", "changing a label's settings");
      await this.requirementCheck(caller, patch.required_evaluation);
    }
    const settings = await configureLabel(this.releaseContext(caller), caller, name, patch);
    const { in_use: _, ...view } = labelSettingView(settings, 0);
    return view;
  }

  private releaseContext(caller: Caller): ReleaseContext {
    return {
      store: this.projectStore(caller),
      record: (tx, change) => this.recorder.record(tx, change),
      changed: (promptId) => this.recorder.changed(caller.projectId, promptId),
      gate: this.gate,
      recordProject: (tx, audit, events) => this.recorder.recordProject(tx, audit, events),
      // After commit, as `changed`: this instance's streams and webhook dispatcher read the new events.
      projectChanged: () => this.bus.publish({ kind: "events", projectId: caller.projectId }),
    };
  }

  /** Adds versions made elsewhere (see prompt-import.ts). */
  async importPrompt(caller: Caller, body: ImportPromptBody): Promise<ImportedPrompt> {
    return this.recorder.gated(() => importPrompt(this.changeContext(caller), caller, body));
  }

  /** What a change written outside this class (a create, an import) needs of it. */
  private changeContext(caller: Caller): ChangeContext {
    return {
      store: this.projectStore(caller),
      limits: this.limits,
      record: (tx, change) => this.recorder.record(tx, change),
      changed: (promptId) => this.recorder.changed(caller.projectId, promptId),
      gate: this.gate,
    };
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
  if (document.includesJson !== null) view.includes = JSON.parse(document.includesJson);
  view.labels = JSON.parse(read.labelsJson);
  if (read.fallbackFor !== undefined) view.fallback_for = read.fallbackFor;
  if (read.rollout !== undefined) view.rollout = read.rollout;
  return view;
}
