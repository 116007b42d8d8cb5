import { AppError, notFound } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import type { RemovedLabel } from "@promptstore/core/views";
import { now } from "../../store/ids.js";
import { type Caller, requireAccess } from "../access.js";
import type { ChangeContext } from "./change-context.js";
import { labelState, requireUnprotected } from "./label-moves.js";
import { endPlanOnMove } from "./plans/plan-records.js";
import { PromptChange, requirePrompt } from "./prompt-changes.js";

/**
 * Removes a label (never production) from a prompt: refused on a protected label; its rollout and any plan of
 * it end with it. PromptService.removeLabel runs it.
 */
export async function removeLabel(
  context: ChangeContext,
  caller: Caller,
  promptId: string,
  label: string,
): Promise<RemovedLabel> {
  requireAccess(caller, "publish", `removing label ${label}`);
  if (label === PRODUCTION) {
    throw new AppError("forbidden", "label: production cannot be removed; publish another version instead");
  }
  await context.store.transaction(async (tx) => {
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
    // A plan of the label ends with it (as any move outside the plan ends one).
    await endPlanOnMove(tx, change, prompt, label, timestamp, change.actor, prompt.production_version);
    await context.record(tx, change);
  });
  context.changed(promptId);
  return { id: promptId, label, removed: true };
}
