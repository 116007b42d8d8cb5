import { PRODUCTION } from "@promptstore/core/labels";
import type { NewEvent } from "../../../store/events.js";
import type { PinRow } from "../../../store/prompts/includes.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";

/**
 * `include.outdated` (docs/includes.md): when a change moves what a pointer of a prompt names (a publish, a
 * label's move, a save that moves latest, and production while nothing is published), every version of
 * another prompt that something serves and that pins that pointer to another version is stale: one event per
 * such version, recorded in the change's transaction beside the change's own events. Whether a pin was
 * already stale before does not matter: each move says where the pointer stands now.
 */
export async function outdatedEvents(
  tx: ProjectStore,
  promptId: string,
  events: readonly NewEvent[],
): Promise<NewEvent[]> {
  const moves = pointerMoves(events);
  if (moves.length === 0) return [];
  const outdated: NewEvent[] = [];
  const includes = tx.includes();
  for (const { pointer, target, at } of moves) {
    const stale = (await includes.servedPins(promptId, pointer)).filter((pin) => pin.included_hash !== target);
    if (stale.length === 0) continue;
    const served = await includes.servedVersions(stale.map((p) => p.prompt_id));
    for (const [, pins] of groupByVersion(stale)) {
      const first = pins[0] as PinRow;
      const dependent = await tx.getPrompt(first.prompt_id);
      if (!dependent) continue;
      outdated.push({
        type: "include.outdated",
        prompt_id: first.prompt_id,
        version: first.hash,
        production_version: dependent.production_version,
        latest_version: dependent.latest_version,
        at,
        include: {
          prompt: promptId,
          pointer,
          references: pins.map((p) => p.reference),
          pinned: first.included_hash,
          current: target,
          labels: served.get(first.prompt_id)?.get(first.hash) ?? [],
        },
      });
    }
  }
  return outdated;
}

/** The pointers a change's events moved, each to where it stands after the change. */
function pointerMoves(events: readonly NewEvent[]): { pointer: string; target: string; at: string }[] {
  const moves = new Map<string, { pointer: string; target: string; at: string }>();
  const moved = (pointer: string, target: string, at: string) => moves.set(pointer, { pointer, target, at });
  for (const event of events) {
    if (event.type === "prompt.published") moved(PRODUCTION, event.version, event.at);
    else if (event.type === "prompt.label_moved" && event.label !== undefined)
      moved(event.label, event.version, event.at);
    else if (event.type === "prompt.version_saved") {
      moved("latest", event.version, event.at);
      // Nothing published: production names latest (as a read serves it).
      if (event.production_version === null) moved(PRODUCTION, event.version, event.at);
    }
  }
  return [...moves.values()];
}

/** Pins by the version that holds them and the version they took, in the order given. */
function groupByVersion(pins: readonly PinRow[]): Map<string, PinRow[]> {
  const groups = new Map<string, PinRow[]>();
  for (const pin of pins) {
    const key = `${pin.prompt_id} ${pin.hash} ${pin.included_hash}`;
    groups.set(key, [...(groups.get(key) ?? []), pin]);
  }
  return groups;
}
