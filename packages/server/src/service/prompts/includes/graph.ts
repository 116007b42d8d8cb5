import { AppError } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import { isFixedPointer } from "@promptstore/core/prompts/includes";
import { shortHash } from "@promptstore/core/version-ref";
import type { Dependent, IncludeState, IncludeView } from "@promptstore/core/views";
import type { PinRow } from "../../../store/prompts/includes.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";

/**
 * The used-by graph of includes (docs/includes.md): what a version includes and where its pins stand now,
 * which versions of other prompts pin a prompt and what serves them, and the rule that a prompt a served
 * version pins is not deleted.
 */

/** How many pins `included-by` answers with. */
export const DEPENDENTS_LIMIT = 1000;

/**
 * What `pointer` of `promptId` names now: production (else latest while nothing is published, as reads and
 * saves resolve it), latest, or a label; a hash pointer names its pin. Null when the prompt or label is gone.
 */
export async function pointerNow(
  store: ProjectStore,
  promptId: string,
  pointer: string,
  pinned: string,
): Promise<string | null> {
  if (isFixedPointer(pointer)) return pinned;
  const prompt = await store.getPrompt(promptId);
  if (!prompt) return null;
  if (pointer === PRODUCTION) return prompt.production_version ?? prompt.latest_version;
  if (pointer === "latest") return prompt.latest_version;
  return (await store.labels().labelsOf(promptId)).get(pointer) ?? null;
}

/** Each include of a version beside what its pointer names now. */
export async function includeStates(store: ProjectStore, views: readonly IncludeView[]): Promise<IncludeState[]> {
  const now = memo(store);
  const states: IncludeState[] = [];
  for (const view of views) {
    const current = await now(view.prompt, view.pointer, view.version);
    states.push({ ...view, current, outdated: current !== null && current !== view.version });
  }
  return states;
}

/** Every version of another prompt that pins one of `promptId`'s, with what serves it and where its pin stands. */
export async function dependentsOf(
  store: ProjectStore,
  promptId: string,
): Promise<{ dependents: Dependent[]; truncated: boolean }> {
  const includes = store.includes();
  const rows = await includes.dependentsOf(promptId, DEPENDENTS_LIMIT + 1);
  const truncated = rows.length > DEPENDENTS_LIMIT;
  const kept = rows.slice(0, DEPENDENTS_LIMIT);
  const served = await includes.servedVersions(kept.map((r) => r.prompt_id));
  const now = memo(store);
  const dependents: Dependent[] = [];
  for (const row of kept) {
    const current = await now(promptId, row.pointer, row.included_hash);
    dependents.push({
      prompt: row.prompt_id,
      version: row.hash,
      labels: served.get(row.prompt_id)?.get(row.hash) ?? [],
      include: row.reference,
      pointer: row.pointer,
      pinned: row.included_hash,
      current,
      outdated: current !== null && current !== row.included_hash,
      saved_at: row.created_at,
    });
  }
  return { dependents, truncated };
}

/**
 * Refuses (409) to delete a prompt while a version of another prompt that something serves (production,
 * latest, a label, a rollout's candidate) pins one of its versions, naming them. Pins in versions nothing
 * serves are history and do not hold it back. Read in the deletion's transaction, the prompt locked: a save
 * that would pin it waits for the deletion, then finds no prompt to include.
 */
export async function requireNotIncluded(tx: ProjectStore, promptId: string): Promise<void> {
  const pins = await tx.includes().servedPins(promptId);
  if (pins.length === 0) return;
  const served = await tx.includes().servedVersions(pins.map((p) => p.prompt_id));
  const named = distinctVersions(pins).map(
    (p) => `${p.prompt_id} ${shortHash(p.hash)} (${(served.get(p.prompt_id)?.get(p.hash) ?? []).join(", ")})`,
  );
  throw new AppError(
    "conflict",
    `prompt: ${promptId} is included by versions that labels serve: ${named.join(", ")}; ` +
      `save those prompts without the include (or delete them) first: GET /api/v2/prompts/${promptId}/included-by`,
  );
}

const distinctVersions = (pins: readonly PinRow[]): PinRow[] => {
  const seen = new Set<string>();
  return pins.filter((p) => {
    const key = `${p.prompt_id} ${p.hash}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/** `pointerNow`, each prompt and pointer looked up once. */
function memo(store: ProjectStore) {
  const known = new Map<string, Promise<string | null>>();
  return (promptId: string, pointer: string, pinned: string): Promise<string | null> => {
    if (isFixedPointer(pointer)) return Promise.resolve(pinned);
    const key = `${promptId}@${pointer}`;
    let found = known.get(key);
    if (found === undefined) {
      found = pointerNow(store, promptId, pointer, pinned);
      known.set(key, found);
    }
    return found;
  };
}
