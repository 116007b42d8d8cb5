import type { Section } from "@promptstore/core/content";
import type { DashboardPromptItem } from "@promptstore/core/dashboard";
import { AppError, conflict, notFound } from "@promptstore/core/errors";
import {
  type CreatePromptBody,
  type ImportPromptBody,
  type ReadOptions,
  readDefaults,
  type SaveVersionBody,
} from "@promptstore/core/schemas";
import { slugCandidate, slugify } from "@promptstore/core/slug";
import { extractVariables } from "@promptstore/core/variables";
import { isFullHash } from "@promptstore/core/version-ref";
import type {
  CreatedPrompt,
  DeletedPrompt,
  ImportedPrompt,
  Label,
  PromptList,
  PromptView,
  PublishedVersion,
  SavedVersion,
  VersionList,
} from "@promptstore/core/views";
import { now } from "../store/ids.js";
import type { Store } from "../store/index.js";
import type { PromptAndVersion, PromptRow, VersionDocument } from "../store/prompt-rows.js";
import { type EventSink, ProjectStore } from "../store/prompts.js";
import { type Caller, requireAccess } from "./access.js";
import type { ChangeBus } from "./change-bus.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import {
  PromptChange,
  requirePrompt,
  requireWrite,
  reservePromptSlot,
  resolveHash,
  writtenVersion,
} from "./prompt-changes.js";
import { importPrompt } from "./prompt-import.js";
import { guardJson, versionDocument } from "./version-document.js";

/**
 * A read before it is shaped: the prompt row, the version served and its label, the text as a JSON string
 * (with the guard when asked for), and the version's document, whose JSON the HTTP routes splice into
 * their responses.
 */
export interface PromptRead {
  prompt: PromptRow;
  hash: string;
  label: Label;
  textJson: string;
  document: VersionDocument;
}

const MAX_SLUG_ATTEMPTS = 1000;

/**
 * The one module through which every read and mutation of prompts passes: HTTP, MCP, the CLI and the
 * dashboard call it, never the store. It owns transactions and tells listeners (caches) after commit.
 */
export class PromptService {
  /** Reads that reached the database, for tests and metrics: what a cache in front of `read` saves. */
  reads = 0;
  private readonly guarded: (textJson: string) => string;
  private readonly sinks: EventSink[] = [];

  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
    options: { guardText: string },
  ) {
    this.guarded = guardJson(options.guardText);
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
    const rows = await this.projectStore(caller).listPrompts({
      after,
      limit: limit === undefined ? undefined : limit + 1,
    });
    const prompts = limit === undefined ? rows : rows.slice(0, limit);
    const result: PromptList = { project: { id: caller.projectId, name: caller.projectName }, prompts };
    if (limit !== undefined) {
      const last = prompts[prompts.length - 1];
      result.next_cursor = rows.length > limit && last ? encodeCursor(last) : null;
    }
    return result;
  }

  async read(caller: Caller, promptId: string, options: ReadOptions = {}): Promise<PromptView> {
    return toView(await this.readDocument(caller, promptId, options));
  }

  /** A read as stored: the hot path's single query, plus a prefix lookup for a version given by prefix. */
  async readDocument(caller: Caller, promptId: string, options: ReadOptions = {}): Promise<PromptRead> {
    this.reads++;
    const store = this.projectStore(caller);
    const { version: ref, guard } = readDefaults(options);
    let found: PromptAndVersion;
    let label: Label;
    if (ref === "production" || ref === "latest") {
      const pointed = await store.readPointer(promptId, ref);
      if (!pointed) throw notFound(`prompt ${promptId} not found`);
      found = pointed;
      label = ref === "production" && found.prompt.production_version !== null ? "production" : "latest";
    } else {
      const hash = await this.pinnedHash(store, promptId, ref);
      const pinned = await store.readVersion(promptId, hash);
      if (!pinned) throw notFound(`prompt ${promptId} not found`);
      if (!pinned.version) throw notFound(`version: no version of prompt ${promptId} matches ${ref}`);
      found = { prompt: pinned.prompt, version: pinned.version };
      label = "version";
    }
    const document = found.version.document ?? (await this.computeDocument(store, promptId, found.version.hash));
    return {
      prompt: found.prompt,
      hash: found.version.hash,
      label,
      textJson: guard ? this.guarded(document.textJson) : document.textJson,
      document,
    };
  }

  /** A full hash is read as is (the read says whether it exists); a prefix must name one version. */
  private async pinnedHash(store: ProjectStore, promptId: string, ref: string): Promise<string> {
    if (isFullHash(ref)) return ref;
    try {
      return await resolveHash(store, promptId, ref);
    } catch (error) {
      // A missing prompt is named as such, not as a version that does not match.
      if (error instanceof AppError && error.status === 404) await requirePrompt(store, promptId);
      throw error;
    }
  }

  /** For a version saved before documents were stored: computed from its rows once, then kept. */
  private async computeDocument(store: ProjectStore, promptId: string, hash: string): Promise<VersionDocument> {
    const content = await store.getVersionContent(promptId, hash);
    const document = versionDocument(content.sections, content.tools);
    // Storing it only spares the next read this work: a failure to store must not fail this read.
    await store.saveDocument(promptId, hash, document).catch(() => {});
    return document;
  }

  /** Every prompt with the variables of the version it serves (production, else latest): two queries. */
  async listWithVariables(caller: Caller): Promise<DashboardPromptItem[]> {
    const store = this.projectStore(caller);
    const [prompts, contents, times] = await Promise.all([
      store.listPrompts({}),
      store.servedEnabledContents(),
      store.pointerTimes(),
    ]);
    const savedAt = new Map(times.map((t) => [t.id, t]));
    const sections = new Map<string, Section[]>();
    for (const row of contents) {
      const list = sections.get(row.prompt_id) ?? [];
      list.push({ title: "", content: row.content, enabled: true });
      sections.set(row.prompt_id, list);
    }
    return prompts.map((p) => ({
      ...p,
      variables: extractVariables(sections.get(p.id) ?? []),
      production_saved_at: savedAt.get(p.id)?.production_saved_at ?? null,
      latest_saved_at: savedAt.get(p.id)?.latest_saved_at ?? p.updated_at,
    }));
  }

  async listVersions(caller: Caller, promptId: string): Promise<VersionList> {
    const store = this.projectStore(caller);
    const prompt = await requirePrompt(store, promptId);
    const versions = await store.listVersions(promptId);
    return {
      id: prompt.id,
      production_version: prompt.production_version,
      latest_version: prompt.latest_version,
      versions: versions.map((v) => ({
        version: v.hash,
        message: v.message,
        created_at: v.created_at,
        saved_by: v.saved_by,
      })),
    };
  }

  async create(caller: Caller, body: CreatePromptBody): Promise<CreatedPrompt> {
    requireWrite(caller, body.publish === true, "creating a prompt", "creating a published prompt");
    const timestamp = now();
    const version = writtenVersion(caller, body, timestamp);
    const { hash } = version;
    const publish = body.publish ?? false;

    const id = await this.projectStore(caller).transaction(async (tx) => {
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
    const version = writtenVersion(caller, body, timestamp);
    const { hash } = version;
    const publish = body.publish ?? false;

    const created = await this.projectStore(caller).transaction(async (tx) => {
      // The row lock first: a deletion in progress is waited for and then seen (404), never half-seen (a
      // version inserted for a prompt that is gone); and two editors who started from the same version are
      // serialized, so the second sees the first's save and is told (base_version).
      await tx.lockPrompt(promptId);
      const current = await requirePrompt(tx, promptId);
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
      if (Object.keys(patch).length > 0) {
        await tx.updatePrompt(promptId, { ...patch, updated_at: timestamp });
        await this.record(tx, change);
      }
      return isNew;
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, version: hash, created, published: publish };
  }

  async publish(caller: Caller, promptId: string, ref = "latest"): Promise<PublishedVersion> {
    requireAccess(caller, "publish", "publishing");
    const hash = await this.projectStore(caller).transaction(async (tx) => {
      // Locked first, like save: a publish racing a deletion is a 404, not an event about a deleted prompt.
      await tx.lockPrompt(promptId);
      const prompt = await requirePrompt(tx, promptId);
      const target = ref === "latest" ? prompt.latest_version : await resolveHash(tx, promptId, ref);
      const timestamp = now();
      await tx.updatePrompt(promptId, { production_version: target, updated_at: timestamp });
      // Publishing what production already serves records nothing, but is still announced.
      const change = new PromptChange(caller, promptId, timestamp);
      if (target !== prompt.production_version) {
        change
          .audited("prompt.published", prompt.production_version, target)
          .event("prompt.published", target, target, prompt.latest_version);
      }
      await this.record(tx, change);
      return target;
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, version: hash, published: true };
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
      await tx.deletePrompt(promptId);
      const served = prompt.production_version ?? prompt.latest_version;
      // The audit row goes before the events: anything that fails from there on (a sink) takes it back.
      await this.record(
        tx,
        new PromptChange(caller, promptId, now())
          .audited("prompt.deleted", served, null)
          .event("prompt.deleted", served, null, null),
      );
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, deleted: true };
  }

  /** Adds versions made elsewhere (see prompt-import.ts). */
  async importPrompt(caller: Caller, body: ImportPromptBody): Promise<ImportedPrompt> {
    return importPrompt(
      {
        store: this.projectStore(caller),
        record: (tx, change) => this.record(tx, change),
        changed: (promptId) => this.changed(caller.projectId, promptId),
      },
      caller,
      body,
    );
  }
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
  };
  if (document.toolsJson !== "[]") view.tools = JSON.parse(document.toolsJson);
  return view;
}
