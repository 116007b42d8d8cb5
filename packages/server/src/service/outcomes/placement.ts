import type { OutcomeArm } from "@promptstore/core/outcomes";
import type { LabelHistory, LabelState, PromptPlacement } from "../../store/outcomes/label-history.js";
import type { ChangeBus } from "../events/change-bus.js";

/**
 * How far around an outcome's time its label's history is looked at (docs/outcomes.md, "Placing"): an answer
 * may have been read just before a label moved and reported just after, and clocks differ. The window is
 * [at − latency − 60 s, at + 60 s]: the read happened about `latency_ms` before the report.
 */
export const PLACEMENT_TOLERANCE_MS = 60_000;

/** An outcome as placing sees it. */
export interface ToPlace {
  index: number;
  promptId: string;
  version: string;
  /** Undefined for a read by version or latest. */
  label: string | undefined;
  arm: OutcomeArm | undefined;
  atMs: number;
  latencyMs: number;
}

export interface Refusal {
  index: number;
  field: string;
  message: string;
}

/** Whether a label's states (oldest first) had `version` in the given role at some moment of [fromMs, toMs]. */
export function servedIn(
  states: readonly LabelState[],
  fromMs: number,
  toMs: number,
  version: string,
  arm: OutcomeArm | undefined,
): boolean {
  for (let i = 0; i < states.length; i++) {
    const state = states[i] as LabelState;
    const next = states[i + 1];
    // In effect from its time until the next state's: it overlaps the window when it starts before the
    // window ends and the next one starts after the window starts.
    if (state.atMs > toMs) break;
    if (next !== undefined && next.atMs <= fromMs) continue;
    if (arm === undefined && (state.version === version || state.candidate === version)) return true;
    if (arm === "current" && state.candidate !== null && state.version === version) return true;
    if (arm === "candidate" && state.candidate === version) return true;
  }
  return false;
}

const short = (hash: string) => hash.slice(0, 7);

interface Entry {
  placement: PromptPlacement;
  /** Versions of the prompt met so far (only those that are: an unknown hash is asked again). */
  held: Set<string>;
  loadedAt: number;
}

/**
 * Places outcomes: their prompt in the caller's project, their version of that prompt, their label (and arm)
 * having served that version around their time. What it learns per prompt is kept for a while and dropped
 * when the prompt changes (on any instance); a refusal is always confirmed on fresh data, so a stale memory
 * never refuses an outcome. A batch costs a few queries, however many prompts it names.
 */
export class Placer {
  private readonly entries = new Map<string, Entry>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly history: LabelHistory,
    bus: ChangeBus,
    private readonly options: { ttlMs: number; maxEntries: number } = { ttlMs: 30_000, maxEntries: 10_000 },
  ) {
    this.unsubscribe = bus.subscribe((change) => {
      if (change.kind === "prompt") this.entries.delete(keyOf(change.projectId, change.promptId));
      else if (change.kind === "reset" || change.kind === "deaf") this.entries.clear();
    });
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }

  /** The refusals among `outcomes` (all of one project), in their order. */
  async place(projectId: string, outcomes: readonly ToPlace[]): Promise<Refusal[]> {
    const first = await this.lookup(
      projectId,
      outcomes.map((o) => o.promptId),
      false,
    );
    await this.learnVersions(projectId, first.entries, outcomes);
    const refused = outcomes.filter((o) => refusalOf(first.entries.get(o.promptId) as Entry, o) !== undefined);
    // What was refused on remembered data is looked at again on fresh data.
    const stale = [...new Set(refused.filter((o) => !first.fresh.has(o.promptId)).map((o) => o.promptId))];
    if (stale.length > 0) {
      const again = await this.lookup(projectId, stale, true);
      for (const [promptId, entry] of again.entries) first.entries.set(promptId, entry);
      await this.learnVersions(projectId, first.entries, refused);
    }
    const refusals: Refusal[] = [];
    for (const o of refused) {
      const refusal = refusalOf(first.entries.get(o.promptId) as Entry, o);
      if (refusal) refusals.push(refusal);
    }
    return refusals;
  }

  /** Of the (prompt, version) pairs, those where the version is of the prompt, as `prompt\u0000version` (fleet reports, which are not held to a label's history). */
  async holds(projectId: string, pairs: readonly { promptId: string; version: string }[]): Promise<Set<string>> {
    const { entries } = await this.lookup(
      projectId,
      pairs.map((p) => p.promptId),
      false,
    );
    await this.learnVersions(projectId, entries, pairs);
    const held = new Set<string>();
    for (const pair of pairs) {
      const entry = entries.get(pair.promptId);
      if (entry?.placement.exists && entry.held.has(pair.version)) held.add(`${pair.promptId}\u0000${pair.version}`);
    }
    return held;
  }

  private async learnVersions(
    projectId: string,
    entries: Map<string, Entry>,
    outcomes: readonly { promptId: string; version: string }[],
  ): Promise<void> {
    const unknown = new Map<string, { promptId: string; version: string }>();
    for (const o of outcomes) {
      const entry = entries.get(o.promptId);
      if (!entry?.placement.exists || entry.held.has(o.version)) continue;
      unknown.set(`${o.promptId}\u0000${o.version}`, { promptId: o.promptId, version: o.version });
    }
    if (unknown.size === 0) return;
    const held = await this.history.heldVersions(projectId, [...unknown.values()]);
    for (const pair of unknown.values()) {
      if (held.has(`${pair.promptId}\u0000${pair.version}`)) entries.get(pair.promptId)?.held.add(pair.version);
    }
  }

  /** Each prompt's entry, from memory when fresh enough (unless `forceFresh`), else loaded together. */
  private async lookup(
    projectId: string,
    promptIds: readonly string[],
    forceFresh: boolean,
  ): Promise<{ entries: Map<string, Entry>; fresh: Set<string> }> {
    const entries = new Map<string, Entry>();
    const toLoad: string[] = [];
    const now = Date.now();
    for (const promptId of new Set(promptIds)) {
      const key = keyOf(projectId, promptId);
      const cached = this.entries.get(key);
      if (cached && !forceFresh && now - cached.loadedAt < this.options.ttlMs) {
        // Most recently used last: the first entry is the one to drop when full.
        this.entries.delete(key);
        this.entries.set(key, cached);
        entries.set(promptId, cached);
      } else {
        toLoad.push(promptId);
      }
    }
    const fresh = new Set(toLoad);
    if (toLoad.length === 0) return { entries, fresh };
    const loaded = await this.history.placements(projectId, toLoad);
    for (const promptId of toLoad) {
      const key = keyOf(projectId, promptId);
      const placement = loaded.get(promptId) as PromptPlacement;
      const before = this.entries.get(key);
      // A prompt deleted (and maybe made again) holds none of what was met before.
      const held = placement.exists && before ? before.held : new Set<string>();
      const entry: Entry = { placement, held, loadedAt: now };
      entries.set(promptId, entry);
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    while (this.entries.size > this.options.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    return { entries, fresh };
  }
}

const keyOf = (projectId: string, promptId: string) => `${projectId}\u0000${promptId}`;

function refusalOf(entry: Entry, o: ToPlace): Refusal | undefined {
  const { promptId } = o;
  if (!entry.placement.exists) {
    return { index: o.index, field: `outcomes[${o.index}].prompt`, message: `no prompt ${promptId} in this project` };
  }
  if (!entry.held.has(o.version)) {
    return {
      index: o.index,
      field: `outcomes[${o.index}].version`,
      message: `prompt ${promptId} holds no version ${o.version}`,
    };
  }
  if (o.label === undefined) {
    if (o.arm === undefined) return undefined;
    return {
      index: o.index,
      field: `outcomes[${o.index}].arm`,
      message: "needs the label whose rollout answered the read",
    };
  }
  const states = entry.placement.history.get(o.label) ?? [];
  const from = o.atMs - o.latencyMs - PLACEMENT_TOLERANCE_MS;
  const to = o.atMs + PLACEMENT_TOLERANCE_MS;
  if (servedIn(states, from, to, o.version, o.arm)) return undefined;
  const at = new Date(o.atMs).toISOString();
  if (o.arm !== undefined && servedIn(states, from, to, o.version, undefined)) {
    return {
      index: o.index,
      field: `outcomes[${o.index}].arm`,
      message: `label ${o.label} of prompt ${promptId} had no rollout with ${short(o.version)} as its ${o.arm} version around ${at}`,
    };
  }
  return {
    index: o.index,
    field: `outcomes[${o.index}].label`,
    message: `label ${o.label} of prompt ${promptId} did not serve ${short(o.version)} around ${at}`,
  };
}
