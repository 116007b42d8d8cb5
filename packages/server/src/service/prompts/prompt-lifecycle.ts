import { conflict } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import { slugCandidate, slugify } from "@promptstore/core/prompts/slug";
import type { CreatePromptBody } from "@promptstore/core/schemas";
import type { CreatedPrompt, DeletedPrompt } from "@promptstore/core/views";
import { now } from "../../store/ids.js";
import type { PromptRow } from "../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../store/prompts/prompts.js";
import type { Caller } from "../access.js";
import { requireAccess } from "../access.js";
import type { ChangeContext } from "./change-context.js";
import { requireNotIncluded } from "./includes/graph.js";
import { pendingVersion } from "./includes/pending-version.js";
import { lockPrompts } from "./includes/resolve.js";
import { requireGate, requireUnprotected } from "./label-moves.js";
import { PromptChange, requirePrompt, requireWrite, reservePromptSlot } from "./prompt-changes.js";
import { cancelReleasesOf } from "./releases.js";

const MAX_SLUG_ATTEMPTS = 1000;

/**
 * Creates a prompt with its first version (published when asked, through production's gate and protection),
 * its id given or derived from its name. PromptService.create runs it, gated.
 */
export async function createPrompt(
  context: ChangeContext,
  caller: Caller,
  body: CreatePromptBody,
): Promise<CreatedPrompt> {
  requireWrite(caller, body.publish === true, "creating a prompt", "creating a published prompt");
  const timestamp = now();
  const pending = pendingVersion(caller, body, timestamp, context.limits);
  const publish = body.publish ?? false;

  const { id, hash } = await context.store.transaction(async (tx) => {
    if (publish) await requireUnprotected(tx, body.id ?? slugify(body.name), [PRODUCTION], "publishing");
    await reservePromptSlot(tx, caller);
    await lockPrompts(tx, pending.pieces);
    const version = await pending.pin(tx, body.id);
    const { hash } = version;
    const row: PromptRow = {
      id: "",
      name: body.name,
      description: body.description ?? "",
      production_version: publish ? hash : null,
      latest_version: hash,
      created_at: timestamp,
      updated_at: timestamp,
    };
    const promptId = await insertWithFreeId(tx, row, body.id);
    await tx.insertVersion(promptId, version);
    const change = new PromptChange(caller, promptId, timestamp)
      .audited("prompt.created", null, hash)
      .event("prompt.created", hash, row.production_version, hash);
    if (publish) {
      await requireGate(context.gate, tx, change, { id: promptId }, PRODUCTION, hash, null);
      change.audited("prompt.published", null, hash);
    }
    await context.record(tx, change);
    return { id: promptId, hash };
  });
  context.changed(id);
  return { id, name: body.name, version: hash, published: publish, created_at: timestamp };
}

async function insertWithFreeId(tx: ProjectStore, row: PromptRow, requested: string | undefined): Promise<string> {
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

/**
 * Deletes a prompt with all its versions, sections and tools, and gives its slot back to the plan, in one
 * transaction that also records `prompt.deleted` (whose `version` is what production served, else
 * latest). The id is free again at once; a new prompt with it starts with no history.
 */
export async function deletePrompt(context: ChangeContext, caller: Caller, promptId: string): Promise<DeletedPrompt> {
  // As strong as a publish: it changes what production serves (to nothing).
  requireAccess(caller, "publish", "deleting a prompt");
  await context.store.transaction(async (tx) => {
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
    await requireNotIncluded(tx, promptId);
    await tx.deletePrompt(promptId);
    const served = prompt.production_version ?? prompt.latest_version;
    const at = now();
    const change = new PromptChange(caller, promptId, at);
    // Its pending release requests end with it: none can be approved for a prompt made again with its id.
    await cancelReleasesOf(tx, change, caller, promptId, at);
    // The audit row goes before the events: anything that fails from there on (a sink) takes it back.
    await context.record(
      tx,
      change.audited("prompt.deleted", served, null).event("prompt.deleted", served, null, null),
    );
  });
  context.changed(promptId);
  return { id: promptId, deleted: true };
}
