import { badRequest, conflict } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import type { ContentLimits } from "@promptstore/core/prompts/content-limits";
import { contentHash } from "@promptstore/core/prompts/hash";
import { findIncludes } from "@promptstore/core/prompts/includes";
import type { ImportPromptBody } from "@promptstore/core/schemas";
import type { ImportedPrompt } from "@promptstore/core/views";
import { now } from "../../store/ids.js";
import type { NewVersion } from "../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import type { Caller } from "../access.js";
import type { ChangeContext } from "./change-context.js";
import { toContent } from "./content-input.js";
import { lockPrompts, resolveIncludes } from "./includes/resolve.js";
import { moveLabel, requireUnprotected } from "./label-moves.js";
import { PromptChange, prepareVersion, requireWrite, reservePromptSlot, versionOf } from "./prompt-changes.js";

/** What an import needs of PromptService: the caller's project store, and how a change is recorded and told. */

/**
 * Adds versions made elsewhere, keeping their hashes, messages and times, and points latest (and, only when
 * asked, production) at versions the prompt then holds. Idempotent: versions already held are skipped,
 * pointers already in place are not moved, and nothing is recorded when nothing changed.
 */
export async function importPrompt(
  context: ChangeContext,
  caller: Caller,
  body: ImportPromptBody,
): Promise<ImportedPrompt> {
  // Moving production is a publish, whoever's history it comes from.
  requireWrite(
    caller,
    body.production_version !== undefined,
    "importing versions",
    "importing with production_version",
  );
  const prepared = body.versions.map((v, i) => prepareImported(v, i, caller, context.limits));
  // Oldest first, so that the history reads as it did on the source whatever order the versions came in.
  prepared.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const timestamp = now();
  const id = body.id;

  const result = await context.store.transaction(async (tx) => {
    if (body.production_version !== undefined) {
      await requireUnprotected(tx, id, [PRODUCTION], "importing with production_version");
    }
    let current = await tx.getPrompt(id);
    let created = false;
    if (!current) {
      const latest = body.latest_version;
      if (latest === undefined) throw badRequest("latest_version: required when the import creates the prompt");
      if (!prepared.some((v) => v.hash === latest)) {
        throw badRequest("latest_version: must be one of the versions sent when the import creates the prompt");
      }
      await reservePromptSlot(tx, caller);
      current = {
        id,
        name: body.name,
        description: body.description ?? "",
        production_version: null,
        latest_version: latest,
        created_at: body.created_at ?? timestamp,
        updated_at: timestamp,
      };
      if (!(await tx.insertPrompt(current))) throw conflict(`id: a prompt with id ${id} was created meanwhile; retry`);
      created = true;
    }
    // Locked like a save: a deletion or another import of this prompt is waited for, never half-seen; with
    // the prompts its versions include, in the order of their ids (docs/includes.md, "Concurrent saves").
    await lockPrompts(tx, [id, ...prepared.flatMap((v) => v.pieces)]);
    let inserted = 0;
    for (const version of prepared) if (await tx.insertVersion(id, await version.pin(tx, id))) inserted++;

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
      ...(!created && body.name !== current.name ? { name: body.name } : {}),
      ...(!created && body.description !== undefined && body.description !== current.description
        ? { description: body.description }
        : {}),
    };
    // Latest can also move without a version being added (an older bundle, or versions sent earlier):
    // that is a change of what `latest` serves, told and recorded like a save.
    const latestMoved = !created && latest !== current.latest_version;
    const productionMoved = production !== current.production_version;
    // The trail names who imported (the bundle's saved_by stays the versions' history).
    const change = new PromptChange(caller, id, timestamp);
    if (created) {
      change.event("prompt.created", latest, production, latest).audited("prompt.created", null, latest);
    } else if (inserted > 0 || latestMoved) {
      change
        .event("prompt.version_saved", latest, production, latest)
        .audited("prompt.saved", current.latest_version, latest);
    }
    const changed = created || inserted > 0 || productionMoved || Object.keys(patch).length > 0;
    if (Object.keys(patch).length > 0) await tx.updatePrompt(id, { ...patch, updated_at: timestamp });
    // Production moves the one way every label moves (label-moves.ts): to a version the prompt holds, and
    // ending a rollout on it.
    if (productionMoved && production !== null) {
      const prompt = { ...current, latest_version: latest };
      await moveLabel(tx, change, prompt, { label: PRODUCTION, target: production }, timestamp, context.gate);
    }
    if (changed) await context.record(tx, change);
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
  if (changed) context.changed(id);
  return imported;
}

/** A version to import, its hash checked; one with includes is pinned in the import's transaction. */
interface ImportedVersion {
  hash: string;
  at: string;
  /** The prompts its includes name, to lock (none without includes). */
  pieces: string[];
  pin(tx: ProjectStore, selfId: string): Promise<NewVersion>;
}

/**
 * A version of the body, checked before anything is read: its hash against its content (with its pins, when
 * it has includes). Without `includes` its sections are taken as they are, a `{{> …}}` in them literal text,
 * as before includes. With them, every include written must have its pin, which must name a version the
 * import or the store holds by the time it is pinned (resolve.ts checks it, naming `versions[i].includes.…`).
 */
function prepareImported(
  v: ImportPromptBody["versions"][number],
  i: number,
  caller: Caller,
  limits: ContentLimits,
): ImportedVersion {
  const field = `versions[${i}].`;
  const history = { message: v.message ?? null, created_at: v.created_at, saved_by: v.saved_by ?? caller.actor };
  const pins = v.includes ?? {};
  if (Object.keys(pins).length === 0) {
    const version = prepareVersion({ sections: v.sections, tools: v.tools, model: v.model }, history, limits, field);
    if (version.hash !== v.version) {
      throw badRequest(`${field}version: does not match the version's content, whose hash is ${version.hash}`);
    }
    return { hash: version.hash, at: version.created_at, pieces: [], pin: async () => version };
  }
  const content = toContent({ sections: v.sections, tools: v.tools, model: v.model }, limits, field);
  const found = findIncludes(content.sections);
  if ("problem" in found) throw badRequest(`${field}sections[${found.section}].content: ${found.problem}`);
  const references = new Set(found.includes.map((include) => include.reference));
  for (const reference of Object.keys(pins)) {
    if (!references.has(reference)) {
      throw badRequest(`${field}includes.${reference}: the sections hold no include {{> ${reference}}}`);
    }
  }
  for (const include of found.includes) {
    if (pins[include.reference] === undefined) {
      throw badRequest(
        `${field}includes: has no pin for the include {{> ${include.reference}}} of sections[${include.at}]`,
      );
    }
  }
  const hash = contentHash({ ...content, includes: pins });
  if (hash !== v.version) {
    throw badRequest(`${field}version: does not match the version's content and pins, whose hash is ${hash}`);
  }
  return {
    hash,
    at: v.created_at,
    pieces: [...new Set(found.includes.map((include) => include.prompt))],
    async pin(tx, selfId) {
      const resolution = await resolveIncludes(
        tx,
        selfId,
        content.sections,
        found.includes,
        pins,
        limits,
        field,
        field,
      );
      return versionOf(content, history, resolution);
    },
  };
}
