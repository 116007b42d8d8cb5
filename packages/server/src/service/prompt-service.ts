import { assemble, withGuard } from "@promptstore/core/assemble";
import type { Section } from "@promptstore/core/content";
import { AppError, conflict, notFound } from "@promptstore/core/errors";
import { contentHash, withSectionIds } from "@promptstore/core/hash";
import { isPlanName, PLANS } from "@promptstore/core/plans";
import type { CreatePromptBody, SaveVersionBody } from "@promptstore/core/schemas";
import { slugCandidate, slugify } from "@promptstore/core/slug";
import { extractVariables } from "@promptstore/core/variables";
import type {
  CreatedPrompt,
  Label,
  PromptList,
  PromptListItem,
  PromptView,
  PublishedVersion,
  SavedVersion,
  VersionList,
} from "@promptstore/core/views";
import { now } from "../store/ids.js";
import type { Store } from "../store/index.js";
import { ProjectStore, type PromptRow, type StoredVersion } from "../store/prompts.js";
import type { ChangeBus } from "./change-bus.js";
import { toContent } from "./content-input.js";
import { decodeCursor, encodeCursor } from "./cursor.js";

/** Who is asking: the project of the API key, and the organization whose plan applies. */
export interface Scope {
  projectId: string;
  projectName: string;
  orgId: string;
  plan: string;
  /** Who acts, recorded with each version saved: `key:<prefix>` or `user:<e-mail>`. */
  actor: string;
}

export interface ReadOptions {
  /** `production` (default), `latest`, a full hash or a 7+ character prefix. */
  version?: string | undefined;
  /** Append the guard text (default true). */
  guard?: boolean | undefined;
}

const MAX_SLUG_ATTEMPTS = 1000;

/**
 * The one module through which every read and mutation of prompts passes: HTTP, MCP, the CLI and the
 * dashboard call it, never the store. It owns transactions and tells listeners (caches) after commit.
 */
export class PromptService {
  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
    private readonly options: { guardText: string },
  ) {}

  /** Called after commit, never before: a cache told early could refill from the old row. */
  private changed(projectId: string, promptId: string): void {
    this.bus.publish({ kind: "prompt", projectId, promptId });
  }

  private scoped(scope: Scope): ProjectStore {
    return new ProjectStore(this.store.db, this.store.queries, this.store.channel, scope.projectId);
  }

  async list(
    scope: Scope,
    page: { limit?: number | undefined; cursor?: string | undefined } = {},
  ): Promise<PromptList> {
    const paginated = page.limit !== undefined || page.cursor !== undefined;
    const after = page.cursor !== undefined ? decodeCursor(page.cursor) : undefined;
    const limit = paginated ? (page.limit ?? 100) : undefined;
    const rows = await this.scoped(scope).listPrompts({ after, limit: limit === undefined ? undefined : limit + 1 });
    const prompts = limit === undefined ? rows : rows.slice(0, limit);
    const result: PromptList = { project: { id: scope.projectId, name: scope.projectName }, prompts };
    if (limit !== undefined) {
      const last = prompts[prompts.length - 1];
      result.next_cursor = rows.length > limit && last ? encodeCursor(last) : null;
    }
    return result;
  }

  async read(scope: Scope, promptId: string, options: ReadOptions = {}): Promise<PromptView> {
    const store = this.scoped(scope);
    const ref = options.version ?? "production";
    const guard = options.guard ?? true;
    if (ref === "production" || ref === "latest") {
      // The hot path: one query from prompt to sections.
      const found = await store.readPointer(promptId, ref);
      if (!found) throw notFound(`prompt ${promptId} not found`);
      const label = ref === "production" && found.prompt.production_version !== null ? "production" : "latest";
      return this.view(found.prompt, found.version, label, guard);
    }
    const prompt = await this.requirePrompt(store, promptId);
    const hash = await this.resolveHash(store, promptId, ref);
    const version = await store.getVersion(promptId, hash);
    if (!version) throw notFound(`version: ${hash} of prompt ${promptId} not found`);
    return this.view(prompt, version, "version", guard);
  }

  /** The assembled view of one version; pure given its inputs. */
  private view(prompt: PromptRow, version: StoredVersion, label: Label, guard: boolean): PromptView {
    const text = assemble(version.sections);
    const view: PromptView = {
      id: prompt.id,
      name: prompt.name,
      description: prompt.description,
      prompt: guard ? withGuard(text, this.options.guardText) : text,
      sections: version.sections,
      variables: extractVariables(version.sections),
      version: version.hash,
      label,
      production_version: prompt.production_version,
      created_at: prompt.created_at,
      updated_at: prompt.updated_at,
    };
    if (version.tools.length > 0) view.tools = version.tools;
    return view;
  }

  /** Every prompt with the variables of the version it serves (production, else latest): two queries. */
  async listWithVariables(scope: Scope): Promise<(PromptListItem & { variables: string[] })[]> {
    const store = this.scoped(scope);
    const [prompts, contents] = await Promise.all([store.listPrompts({}), store.servedEnabledContents()]);
    const sections = new Map<string, Section[]>();
    for (const row of contents) {
      const list = sections.get(row.prompt_id) ?? [];
      list.push({ title: "", content: row.content, enabled: true });
      sections.set(row.prompt_id, list);
    }
    return prompts.map((p) => ({ ...p, variables: extractVariables(sections.get(p.id) ?? []) }));
  }

  async listVersions(scope: Scope, promptId: string): Promise<VersionList> {
    const store = this.scoped(scope);
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

  async create(scope: Scope, body: CreatePromptBody): Promise<CreatedPrompt> {
    const content = toContent(body);
    const hash = contentHash(content);
    const sections = withSectionIds(content.sections);
    const publish = body.publish ?? false;
    const limit = isPlanName(scope.plan) ? PLANS[scope.plan].promptsPerProject : PLANS.free.promptsPerProject;
    const timestamp = now();

    const id = await this.scoped(scope).transaction(async (tx) => {
      if (!(await tx.reservePromptSlot(limit))) {
        throw new AppError(
          "plan_limit",
          `plan limit reached: the ${scope.plan} plan allows ${limit} prompts per project`,
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
        saved_by: scope.actor,
        content,
        sections,
      });
      await tx.announceChange(promptId);
      return promptId;
    });
    this.changed(scope.projectId, id);
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

  async save(scope: Scope, promptId: string, body: SaveVersionBody): Promise<SavedVersion> {
    const content = toContent(body);
    const hash = contentHash(content);
    const sections = withSectionIds(content.sections);
    const publish = body.publish ?? false;
    const timestamp = now();

    const created = await this.scoped(scope).transaction(async (tx) => {
      await this.requirePrompt(tx, promptId);
      const isNew = await tx.insertVersion(promptId, {
        hash,
        message: body.message ?? null,
        created_at: timestamp,
        saved_by: scope.actor,
        content,
        sections,
      });
      const patch = {
        ...(isNew ? { latest_version: hash } : {}),
        ...(publish ? { production_version: hash } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
      };
      if (Object.keys(patch).length > 0) {
        await tx.updatePrompt(promptId, { ...patch, updated_at: timestamp });
        await tx.announceChange(promptId);
      }
      return isNew;
    });
    this.changed(scope.projectId, promptId);
    return { id: promptId, version: hash, created, published: publish };
  }

  async publish(scope: Scope, promptId: string, ref = "latest"): Promise<PublishedVersion> {
    const hash = await this.scoped(scope).transaction(async (tx) => {
      const prompt = await this.requirePrompt(tx, promptId);
      const target = ref === "latest" ? prompt.latest_version : await this.resolveHash(tx, promptId, ref);
      await tx.updatePrompt(promptId, { production_version: target, updated_at: now() });
      await tx.announceChange(promptId);
      return target;
    });
    this.changed(scope.projectId, promptId);
    return { id: promptId, version: hash, published: true };
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
