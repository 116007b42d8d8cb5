import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import { isLabelRef, PRODUCTION, type RolloutArm, rolloutArm } from "@promptstore/core/labels";
import { isFullHash } from "@promptstore/core/version-ref";
import type { Label } from "@promptstore/core/views";
import type { PromptAndVersion, PromptRow, VersionDocument } from "../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import { requirePrompt, resolveHash } from "./prompt-changes.js";
import { versionDocument } from "./version-document.js";

/**
 * A read before it is shaped: the prompt row, the version served and what resolved it, the text as a JSON
 * string (with the guard when asked for), the version's document, whose JSON the HTTP routes splice into
 * their responses, and the prompt's labels as a JSON object (production included).
 */
export interface PromptRead {
  prompt: PromptRow;
  hash: string;
  label: Label;
  textJson: string;
  document: VersionDocument;
  labelsJson: string;
  /** The label asked for, when its fallback (`label`) served instead. */
  fallbackFor?: string;
  /** A rollout on the label that served: the arm this read got. */
  rollout?: { candidate: string; percent: number; arm: RolloutArm };
}

/**
 * A read before an arm is chosen: one read, or, when the label that serves has a rollout, both arms (so a
 * cache keeps both and chooses per request, by the request's assign value).
 */
export type ResolvedRead =
  | { kind: "single"; read: PromptRead }
  | {
      kind: "rollout";
      label: string;
      percent: number;
      arms: Record<RolloutArm, PromptRead>;
    };

/** How long a chain of fallbacks may be: a cycle (a → b → a) is cut here. */
const MAX_FALLBACKS = 4;

/** The arm of a rollout a read gets: by its assign value when it has one, else at random. */
export function armFor(promptId: string, label: string, percent: number, assign: string | undefined): RolloutArm {
  if (assign !== undefined) return rolloutArm(promptId, label, assign, percent);
  return Math.random() * 10_000 < percent * 100 ? "candidate" : "current";
}

/** The one read a resolved read gives a request with this assign value. */
export function pick(resolved: ResolvedRead, promptId: string, assign: string | undefined): PromptRead {
  if (resolved.kind === "single") return resolved.read;
  return resolved.arms[armFor(promptId, resolved.label, resolved.percent, assign)];
}

/**
 * The prompt's labels as the JSON object reads carry: production first when set, then the others by name
 * (the database gives those as JSON already; they are parsed only when there are any).
 */
export function labelsJsonOf(productionVersion: string | null, othersJson: string): string {
  const production = productionVersion === null ? "" : `"production":${JSON.stringify(productionVersion)}`;
  if (othersJson === "{}") return `{${production}}`;
  const others = JSON.parse(othersJson) as Record<string, string>;
  const sorted: Record<string, string> = {};
  if (productionVersion !== null) sorted.production = productionVersion;
  for (const name of Object.keys(others).sort()) sorted[name] = others[name] as string;
  return JSON.stringify(sorted);
}

/**
 * Resolves a read's version reference: `production` and `latest` on the hot path's one query; a label by
 * the prompt's labels (its fallback when it lacks one); a hash or prefix by the versions. A label with a
 * rollout resolves to both arms.
 */
export class PromptReader {
  constructor(private readonly guarded: (textJson: string) => string) {}

  async resolve(store: ProjectStore, promptId: string, ref: string, guard: boolean): Promise<ResolvedRead> {
    if (ref === "production" || ref === "latest") {
      const found = await store.readPointer(promptId, ref);
      if (!found) throw notFound(`prompt ${promptId} not found`);
      const label = ref === "production" && found.prompt.production_version !== null ? "production" : "latest";
      const read = await this.shape(store, found, label, guard);
      return label === "production" ? this.withRollout(store, found, read, PRODUCTION, guard) : single(read);
    }
    if (isLabelRef(ref)) {
      // A name no prompt of the project carries, and no settings name, is the 400 it always was, before the
      // prompt is even looked up: a project without labels answers exactly as before them.
      if (!(await store.labels().projectKnows(ref))) {
        throw badRequest(
          "version: must be production, latest, a label this project uses, or 7-64 lowercase hex characters of a version hash",
        );
      }
      return this.resolveLabel(store, promptId, ref, guard, undefined, 0);
    }
    const hash = await pinnedHash(store, promptId, ref);
    const pinned = await store.readVersion(promptId, hash);
    if (!pinned) throw notFound(`prompt ${promptId} not found`);
    if (!pinned.version) throw notFound(`version: no version of prompt ${promptId} matches ${ref}`);
    return single(await this.shape(store, { ...pinned, version: pinned.version }, "version", guard));
  }

  /** A label other than production: what it points to, its fallback's read, or a 404 (400 if unknown). */
  private async resolveLabel(
    store: ProjectStore,
    promptId: string,
    label: string,
    guard: boolean,
    fallbackFor: string | undefined,
    depth: number,
  ): Promise<ResolvedRead> {
    if (label === PRODUCTION) {
      const resolved = await this.resolve(store, promptId, PRODUCTION, guard);
      return fallbackFor === undefined ? resolved : markFallback(resolved, fallbackFor);
    }
    const head = await store.readPointer(promptId, "latest");
    if (!head) throw notFound(`prompt ${promptId} not found`);
    const labels = JSON.parse(head.labelsJson) as Record<string, string>;
    const hash = labels[label];
    if (hash !== undefined) {
      const pinned = await store.readVersion(promptId, hash);
      if (!pinned?.version) throw notFound(`prompt ${promptId} not found`);
      const found = { ...pinned, version: pinned.version };
      const read = await this.shape(store, found, label, guard);
      if (fallbackFor !== undefined) read.fallbackFor = fallbackFor;
      return this.withRollout(store, found, read, label, guard);
    }
    const settings = await store.labels().settingsOf(label);
    if (settings?.fallback && depth < MAX_FALLBACKS) {
      return this.resolveLabel(store, promptId, settings.fallback, guard, fallbackFor ?? label, depth + 1);
    }
    throw notFound(`label: prompt ${promptId} has no version labelled ${fallbackFor ?? label}`);
  }

  /** Adds the other arm when the label that served has a rollout. */
  private async withRollout(
    store: ProjectStore,
    found: Omit<PromptAndVersion, "version"> & { version: PromptAndVersion["version"] },
    read: PromptRead,
    label: string,
    guard: boolean,
  ): Promise<ResolvedRead> {
    if (found.rolloutsJson === "{}") return single(read);
    const rollout = (JSON.parse(found.rolloutsJson) as Record<string, [string, number]>)[label];
    if (!rollout) return single(read);
    const [candidateHash, percent] = rollout;
    const pinned = await store.readVersion(found.prompt.id, candidateHash);
    if (!pinned?.version) return single(read);
    const candidate = await this.shape(store, { ...pinned, version: pinned.version }, read.label, guard);
    if (read.fallbackFor !== undefined) candidate.fallbackFor = read.fallbackFor;
    const state = { candidate: candidateHash, percent };
    return {
      kind: "rollout",
      label,
      percent,
      arms: {
        current: { ...read, rollout: { ...state, arm: "current" } },
        candidate: { ...candidate, rollout: { ...state, arm: "candidate" } },
      },
    };
  }

  private async shape(
    store: ProjectStore,
    found: Omit<PromptAndVersion, "version"> & { version: PromptAndVersion["version"] },
    label: Label,
    guard: boolean,
  ): Promise<PromptRead> {
    const document = found.version.document ?? (await computeDocument(store, found.prompt.id, found.version.hash));
    return {
      prompt: found.prompt,
      hash: found.version.hash,
      label,
      textJson: guard ? this.guarded(document.textJson) : document.textJson,
      document,
      labelsJson: labelsJsonOf(found.prompt.production_version, found.labelsJson),
    };
  }
}

const single = (read: PromptRead): ResolvedRead => ({ kind: "single", read });

function markFallback(resolved: ResolvedRead, fallbackFor: string): ResolvedRead {
  if (resolved.kind === "single") return single({ ...resolved.read, fallbackFor });
  return {
    ...resolved,
    arms: {
      current: { ...resolved.arms.current, fallbackFor },
      candidate: { ...resolved.arms.candidate, fallbackFor },
    },
  };
}

/** A full hash is read as is (the read says whether it exists); a prefix must name one version. */
async function pinnedHash(store: ProjectStore, promptId: string, ref: string): Promise<string> {
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
async function computeDocument(store: ProjectStore, promptId: string, hash: string): Promise<VersionDocument> {
  const content = await store.getVersionContent(promptId, hash);
  const document = versionDocument(content.sections, content.tools, content.model);
  // Storing it only spares the next read this work: a failure to store must not fail this read.
  await store.saveDocument(promptId, hash, document).catch(() => {});
  return document;
}
