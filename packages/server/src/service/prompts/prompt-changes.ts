import { planLimits } from "@promptstore/core/accounts/plans";
import type { AuditAction } from "@promptstore/core/audit";
import { AppError, conflict, notFound } from "@promptstore/core/errors";
import type { Content } from "@promptstore/core/prompts/content";
import type { ContentLimits } from "@promptstore/core/prompts/content-limits";
import { contentHash, withSectionIds } from "@promptstore/core/prompts/hash";
import type { NewAuditEntry } from "../../store/audit.js";
import type { NewEvent } from "../../store/events.js";
import type { NewVersion, PromptRow } from "../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import { auditActor, type Caller, requireAccess } from "../access.js";
import { type ContentInput, toContent } from "./content-input.js";
import type { Resolution } from "./includes/resolve.js";
import { versionDocument } from "./version-document.js";

/**
 * The pieces every write of prompts shares (create, save, publish, delete, import): a version prepared the
 * one way it is hashed and stored, the plan's prompt limit, and the audit rows and events of a change.
 */

/** Written content as the version it becomes: hashed, its sections given ids, its read document computed. */
export function prepareVersion(
  input: ContentInput,
  history: { message: string | null; created_at: string; saved_by: string },
  limits: ContentLimits,
  field = "",
): NewVersion {
  return versionOf(toContent(input, limits, field), history);
}

/**
 * Content as the version it becomes: with its includes' pins (docs/includes.md) when it has includes, which
 * its hash then covers and its document serves expanded.
 */
export function versionOf(
  written: Content,
  history: { message: string | null; created_at: string; saved_by: string },
  resolution?: Resolution,
): NewVersion {
  const content = resolution === undefined ? written : { ...written, includes: resolution.pins };
  const sections = withSectionIds(content.sections);
  const version: NewVersion = {
    hash: contentHash(content),
    ...history,
    content,
    sections,
    document: versionDocument(sections, content.tools, content.model, resolution?.expansion),
  };
  if (resolution !== undefined) version.includes = resolution.includes;
  return version;
}

/** Writing needs write; a write that also moves production (`publishes`) needs publish, like a publish. */
export function requireWrite(caller: Caller, publishes: boolean, writing: string, publishing: string): void {
  requireAccess(caller, publishes ? "publish" : "write", publishes ? publishing : writing);
}

/** Takes one of the plan's prompt slots for a new prompt, or refuses (the transaction then gives it back). */
export async function reservePromptSlot(tx: ProjectStore, caller: Caller): Promise<void> {
  const limit = planLimits(caller.plan).promptsPerProject;
  if (!(await tx.reservePromptSlot(limit))) {
    throw new AppError("plan_limit", `plan limit reached: the ${caller.plan} plan allows ${limit} prompts per project`);
  }
}

export async function requirePrompt(store: ProjectStore, promptId: string): Promise<PromptRow> {
  const prompt = await store.getPrompt(promptId);
  if (!prompt) throw notFound(`prompt ${promptId} not found`);
  return prompt;
}

/** A full hash or a unique prefix of 7+ characters, to the full hash of one version of the prompt. */
export async function resolveHash(store: ProjectStore, promptId: string, ref: string): Promise<string> {
  const matches = await store.findHashesByPrefix(promptId, ref);
  if (matches.length === 0) throw notFound(`version: no version of prompt ${promptId} matches ${ref}`);
  if (matches.length > 1) {
    throw conflict(`version: ${ref} matches more than one version of prompt ${promptId}; give more characters`);
  }
  return matches[0] as string;
}

/**
 * What one change to a prompt records in its transaction: the audit rows (who did what, from which version
 * to which) and the events (with both pointers as they are after the change) that streams and webhooks get.
 */
export class PromptChange {
  readonly audit: NewAuditEntry[] = [];
  readonly events: NewEvent[] = [];

  constructor(
    private readonly caller: Caller,
    readonly promptId: string,
    private readonly at: string,
  ) {}

  /** Who makes the change, as the audit trail names them. */
  get actor(): string {
    return auditActor(this.caller);
  }

  /** An audit row for a refused change, which is written on its own after the change rolled back. */
  refusal(action: AuditAction, before: string | null, after: string | null, target = this.promptId): NewAuditEntry {
    const { orgId, projectId } = this.caller;
    return { orgId, projectId, at: this.at, actor: auditActor(this.caller), action, target, before, after };
  }

  /** An audit row; `before` and `after` are version hashes. `target` is the prompt unless told. */
  audited(action: AuditAction, before: string | null, after: string | null, target = this.promptId): this {
    const { orgId, projectId } = this.caller;
    this.audit.push({ orgId, projectId, at: this.at, actor: auditActor(this.caller), action, target, before, after });
    return this;
  }

  /** An event; `details` carries the release path's fields (label, previous version, rollout, request). */
  event(
    type: NewEvent["type"],
    version: string,
    production: string | null,
    latest: string | null,
    details: Pick<NewEvent, "label" | "previous_version" | "rollout" | "release" | "plan"> = {},
  ): this {
    this.events.push({
      type,
      prompt_id: this.promptId,
      version,
      production_version: production,
      latest_version: latest,
      at: this.at,
      ...details,
    });
    return this;
  }
}
