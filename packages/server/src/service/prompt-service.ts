import type { AuditAction } from "@promptstore/core/audit";
import type { Section } from "@promptstore/core/content";
import type { DashboardPromptItem } from "@promptstore/core/dashboard";
import { AppError, badRequest, conflict, notFound } from "@promptstore/core/errors";
import { contentHash, withSectionIds } from "@promptstore/core/hash";
import { planLimits } from "@promptstore/core/plans";
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
import type { NewAuditEntry } from "../store/audit.js";
import type { NewEvent } from "../store/events.js";
import { now } from "../store/ids.js";
import type { Store } from "../store/index.js";
import {
  type EventSink,
  ProjectStore,
  type PromptAndVersion,
  type PromptRow,
  type VersionDocument,
} from "../store/prompts.js";
import { type Caller, requireAccess } from "./access.js";
import type { ChangeBus } from "./change-bus.js";
import { toContent } from "./content-input.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
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
      return await this.resolveHash(store, promptId, ref);
    } catch (error) {
      // A missing prompt is named as such, not as a version that does not match.
      if (error instanceof AppError && error.status === 404) await this.requirePrompt(store, promptId);
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
    const prompt = await this.requirePrompt(store, promptId);
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
    requireAccess(
      caller,
      body.publish ? "publish" : "write",
      body.publish ? "creating a published prompt" : "creating a prompt",
    );
    const content = toContent(body);
    const hash = contentHash(content);
    const sections = withSectionIds(content.sections);
    const document = versionDocument(sections, content.tools);
    const publish = body.publish ?? false;
    const limit = planLimits(caller.plan).promptsPerProject;
    const timestamp = now();

    const id = await this.projectStore(caller).transaction(async (tx) => {
      if (!(await tx.reservePromptSlot(limit))) {
        throw new AppError(
          "plan_limit",
          `plan limit reached: the ${caller.plan} plan allows ${limit} prompts per project`,
        );
      }
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
      await tx.insertVersion(promptId, {
        hash,
        message: body.message ?? null,
        created_at: timestamp,
        saved_by: caller.actor,
        content,
        sections,
        document,
      });
      const audit = [audited(caller, "prompt.created", promptId, null, hash, timestamp)];
      if (publish) audit.push(audited(caller, "prompt.published", promptId, null, hash, timestamp));
      await tx.recordAudit(audit);
      await tx.recordEvents(
        [event("prompt.created", promptId, hash, row.production_version, hash, timestamp)],
        this.sinks,
      );
      await tx.announceChange(promptId);
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
    requireAccess(
      caller,
      body.publish ? "publish" : "write",
      body.publish ? "saving and publishing" : "saving a version",
    );
    const content = toContent(body);
    const hash = contentHash(content);
    const sections = withSectionIds(content.sections);
    const document = versionDocument(sections, content.tools);
    const publish = body.publish ?? false;
    const timestamp = now();

    const created = await this.projectStore(caller).transaction(async (tx) => {
      // The row lock first: a deletion in progress is waited for and then seen (404), never half-seen (a
      // version inserted for a prompt that is gone); and two editors who started from the same version are
      // serialized, so the second sees the first's save and is told (base_version).
      await tx.lockPrompt(promptId);
      const current = await this.requirePrompt(tx, promptId);
      if (body.base_version !== undefined && current.latest_version !== body.base_version) {
        throw conflict(
          `base_version: the prompt changed since this edit began; latest is now ${current.latest_version}`,
        );
      }
      const isNew = await tx.insertVersion(promptId, {
        hash,
        message: body.message ?? null,
        created_at: timestamp,
        saved_by: caller.actor,
        content,
        sections,
        document,
      });
      const patch = {
        ...(isNew ? { latest_version: hash } : {}),
        ...(publish ? { production_version: hash } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
      };
      const latest = isNew ? hash : current.latest_version;
      const production = publish ? hash : current.production_version;
      const events: NewEvent[] = [];
      if (isNew)
        events.push(event("prompt.version_saved", promptId, hash, current.production_version, hash, timestamp));
      if (production !== current.production_version) {
        events.push(event("prompt.published", promptId, hash, production, latest, timestamp));
      }
      const audit: NewAuditEntry[] = [];
      if (isNew) audit.push(audited(caller, "prompt.saved", promptId, current.latest_version, hash, timestamp));
      if (production !== current.production_version) {
        audit.push(audited(caller, "prompt.published", promptId, current.production_version, production, timestamp));
      }
      if (Object.keys(patch).length > 0) {
        await tx.updatePrompt(promptId, { ...patch, updated_at: timestamp });
        await tx.recordAudit(audit);
        await tx.recordEvents(events, this.sinks);
        await tx.announceChange(promptId);
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
      const prompt = await this.requirePrompt(tx, promptId);
      const target = ref === "latest" ? prompt.latest_version : await this.resolveHash(tx, promptId, ref);
      const timestamp = now();
      await tx.updatePrompt(promptId, { production_version: target, updated_at: timestamp });
      if (target !== prompt.production_version) {
        await tx.recordAudit([
          audited(caller, "prompt.published", promptId, prompt.production_version, target, timestamp),
        ]);
        await tx.recordEvents(
          [event("prompt.published", promptId, target, target, prompt.latest_version, timestamp)],
          this.sinks,
        );
      }
      await tx.announceChange(promptId);
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
      const prompt = await this.requirePrompt(tx, promptId);
      await tx.deletePrompt(promptId);
      const served = prompt.production_version ?? prompt.latest_version;
      const timestamp = now();
      // The audit row before the events: anything that fails from here on (a sink) takes it back with the change.
      await tx.recordAudit([audited(caller, "prompt.deleted", promptId, served, null, timestamp)]);
      await tx.recordEvents([event("prompt.deleted", promptId, served, null, null, timestamp)], this.sinks);
      await tx.announceChange(promptId);
    });
    this.changed(caller.projectId, promptId);
    return { id: promptId, deleted: true };
  }

  /**
   * Adds versions made elsewhere, keeping their hashes, messages and times, and points latest (and, only when
   * asked, production) at versions the prompt then holds. Idempotent: versions already held are skipped,
   * pointers already in place are not moved, and nothing is recorded when nothing changed.
   */
  async importPrompt(caller: Caller, body: ImportPromptBody): Promise<ImportedPrompt> {
    // Moving production is a publish, whoever's history it comes from.
    requireAccess(
      caller,
      body.production_version !== undefined ? "publish" : "write",
      body.production_version !== undefined ? "importing with production_version" : "importing versions",
    );
    const prepared = body.versions.map((v, i) => {
      const content = toContent({ sections: v.sections, tools: v.tools });
      const hash = contentHash(content);
      if (hash !== v.version) {
        throw badRequest(`versions[${i}].version: does not match the version's content, whose hash is ${hash}`);
      }
      const sections = withSectionIds(content.sections);
      return {
        hash,
        message: v.message ?? null,
        created_at: v.created_at,
        saved_by: v.saved_by ?? caller.actor,
        content,
        sections,
        document: versionDocument(sections, content.tools),
      };
    });
    // Oldest first, so that the history reads as it did on the source whatever order the versions came in.
    prepared.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    const limit = planLimits(caller.plan).promptsPerProject;
    const timestamp = now();
    const id = body.id;

    const result = await this.projectStore(caller).transaction(async (tx) => {
      let current = await tx.getPrompt(id);
      let created = false;
      if (!current) {
        const latest = body.latest_version;
        if (latest === undefined) throw badRequest("latest_version: required when the import creates the prompt");
        if (!prepared.some((v) => v.hash === latest)) {
          throw badRequest("latest_version: must be one of the versions sent when the import creates the prompt");
        }
        if (!(await tx.reservePromptSlot(limit))) {
          throw new AppError(
            "plan_limit",
            `plan limit reached: the ${caller.plan} plan allows ${limit} prompts per project`,
          );
        }
        current = {
          id,
          name: body.name,
          description: body.description ?? "",
          production_version: null,
          latest_version: latest,
          created_at: body.created_at ?? timestamp,
          updated_at: timestamp,
        };
        if (!(await tx.insertPrompt(current)))
          throw conflict(`id: a prompt with id ${id} was created meanwhile; retry`);
        created = true;
      }
      // Locked like a save: a deletion or another import of this prompt is waited for, never half-seen.
      await tx.lockPrompt(id);
      let inserted = 0;
      for (const version of prepared) if (await tx.insertVersion(id, version)) inserted++;

      const held = async (field: string, hash: string) => {
        if ((await tx.findHashesByPrefix(id, hash)).length === 0) {
          throw badRequest(`${field}: prompt ${id} has no version ${hash}; send it in versions`);
        }
      };
      const latest = body.latest_version ?? current.latest_version;
      const production = body.production_version ?? current.production_version;
      if (body.latest_version !== undefined) await held("latest_version", body.latest_version);
      if (body.production_version !== undefined) await held("production_version", body.production_version);

      const patch = {
        ...(!created && latest !== current.latest_version ? { latest_version: latest } : {}),
        ...(production !== current.production_version ? { production_version: production } : {}),
        ...(!created && body.name !== current.name ? { name: body.name } : {}),
        ...(!created && body.description !== undefined && body.description !== current.description
          ? { description: body.description }
          : {}),
      };
      // Latest can also move without a version being added (an older bundle, or versions sent earlier):
      // that is a change of what `latest` serves, told and recorded like a save.
      const latestMoved = !created && latest !== current.latest_version;
      const productionMoved = production !== current.production_version;
      const events: NewEvent[] = [];
      // The trail names who imported (the bundle's saved_by stays the versions' history).
      const audit: NewAuditEntry[] = [];
      if (created) {
        events.push(event("prompt.created", id, latest, production, latest, timestamp));
        audit.push(audited(caller, "prompt.created", id, null, latest, timestamp));
      } else if (inserted > 0 || latestMoved) {
        events.push(event("prompt.version_saved", id, latest, production, latest, timestamp));
        audit.push(audited(caller, "prompt.saved", id, current.latest_version, latest, timestamp));
      }
      if (productionMoved && production !== null) {
        events.push(event("prompt.published", id, production, production, latest, timestamp));
        audit.push(audited(caller, "prompt.published", id, current.production_version, production, timestamp));
      }
      const changed = created || inserted > 0 || Object.keys(patch).length > 0;
      if (Object.keys(patch).length > 0) await tx.updatePrompt(id, { ...patch, updated_at: timestamp });
      if (changed) {
        await tx.recordAudit(audit);
        await tx.recordEvents(events, this.sinks);
        await tx.announceChange(id);
      }
      return {
        id,
        created,
        versions_created: inserted,
        versions_existing: prepared.length - inserted,
        latest_version: latest,
        production_version: production,
        published: production !== current.production_version,
        changed,
      };
    });
    const { changed, ...imported } = result;
    if (changed) this.changed(caller.projectId, id);
    return imported;
  }

  private async requirePrompt(store: ProjectStore, promptId: string): Promise<PromptRow> {
    const prompt = await store.getPrompt(promptId);
    if (!prompt) throw notFound(`prompt ${promptId} not found`);
    return prompt;
  }

  /** A full hash or a unique prefix of 7+ characters, to the full hash of one version of the prompt. */
  private async resolveHash(store: ProjectStore, promptId: string, ref: string): Promise<string> {
    const matches = await store.findHashesByPrefix(promptId, ref);
    if (matches.length === 0) throw notFound(`version: no version of prompt ${promptId} matches ${ref}`);
    if (matches.length > 1) {
      throw conflict(`version: ${ref} matches more than one version of prompt ${promptId}; give more characters`);
    }
    return matches[0] as string;
  }
}

function event(
  type: NewEvent["type"],
  promptId: string,
  version: string,
  production: string | null,
  latest: string | null,
  at: string,
): NewEvent {
  return { type, prompt_id: promptId, version, production_version: production, latest_version: latest, at };
}

/** An audit row for a change to one of the caller's prompts; `before` and `after` are version hashes. */
function audited(
  caller: Caller,
  action: AuditAction,
  promptId: string,
  before: string | null,
  after: string | null,
  at: string,
): NewAuditEntry {
  return {
    orgId: caller.orgId,
    projectId: caller.projectId,
    at,
    actor: caller.actor,
    action,
    target: promptId,
    before,
    after,
  };
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
