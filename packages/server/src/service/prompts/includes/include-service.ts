import { AppError } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import { isFixedPointer } from "@promptstore/core/prompts/includes";
import type { SaveVersionBody, UpdateDependentsBody, UpdateIncludesBody } from "@promptstore/core/schemas";
import { shortHash } from "@promptstore/core/version-ref";
import type {
  IncludedBy,
  IncludesUpdate,
  IncludeView,
  PromptIncludes,
  PublishedVersion,
  ReleaseView,
  SavedVersion,
} from "@promptstore/core/views";
import type { ProjectStore } from "../../../store/prompts/prompts.js";
import { type Caller, requireAccess } from "../../access.js";
import { GateRefusal, labelState } from "../label-moves.js";
import { requirePrompt, requireWrite, resolveHash } from "../prompt-changes.js";
import type { PromptRead } from "../prompt-reads.js";
import { dependentsOf, includeStates } from "./graph.js";

/** What the includes' service uses of PromptService: its store, and its read, save, publish and release paths. */
export interface IncludeContext {
  store(caller: Caller): ProjectStore;
  read(caller: Caller, promptId: string, version: string): Promise<PromptRead>;
  save(caller: Caller, promptId: string, body: SaveVersionBody): Promise<SavedVersion>;
  publish(caller: Caller, promptId: string, version: string, label: string): Promise<PublishedVersion>;
  requestRelease(
    caller: Caller,
    promptId: string,
    body: { label: string; version: string; message?: string },
  ): Promise<ReleaseView>;
}

/** One including prompt's update, or why it could not be made. */
export type DependentUpdate = IncludesUpdate | { id: string; error: string; status: number };

/** How many change notes an update names before it says how many more. */
const NOTED_PINS = 10;

/**
 * Includes seen from either end (docs/includes.md): what a version includes and where its pins stand, what
 * includes a prompt, and updating pins on purpose. An update is a save of the version the label serves with
 * new pins, then a publish through the one path every label moves by (protection, required evaluations), so
 * permissions and gates are decided where they always are.
 */
export class IncludeService {
  constructor(private readonly context: IncludeContext) {}

  /** A version's includes (production unless told, as a read resolves it) beside what their pointers name now. */
  async includes(caller: Caller, promptId: string, version = PRODUCTION): Promise<PromptIncludes> {
    requireAccess(caller, "read", "reading a prompt's includes");
    const read = await this.context.read(caller, promptId, version);
    const views = read.document.includesJson === null ? [] : (JSON.parse(read.document.includesJson) as IncludeView[]);
    return { id: promptId, version: read.hash, includes: await includeStates(this.context.store(caller), views) };
  }

  /** Every version of another prompt that pins this one, what serves it, and whether its pin is behind. */
  async includedBy(caller: Caller, promptId: string): Promise<IncludedBy> {
    requireAccess(caller, "read", "reading what includes a prompt");
    const store = this.context.store(caller);
    await requirePrompt(store, promptId);
    const { dependents, truncated } = await dependentsOf(store, promptId);
    return { id: promptId, included_by: dependents, truncated };
  }

  /**
   * Saves the version `label` serves (or `version`) again with its includes re-pinned to what their pointers
   * name now (only those of `only` when given; an include of a hash keeps it), then, if asked, points the label
   * at it where that is allowed: a protected label gets a release request, and a label whose required
   * evaluation the new version has not passed stays where it is (`blocked`, with how to run it).
   */
  async update(caller: Caller, promptId: string, body: UpdateIncludesBody): Promise<IncludesUpdate> {
    const publish = body.publish ?? false;
    requireWrite(caller, publish, "updating a prompt's includes", "updating a prompt's includes and publishing");
    const store = this.context.store(caller);
    const prompt = await requirePrompt(store, promptId);
    const label = body.label ?? PRODUCTION;
    const from =
      body.version === undefined
        ? ((await labelState(store, prompt, label)).version ?? prompt.latest_version)
        : body.version === "latest"
          ? prompt.latest_version
          : await resolveHash(store, promptId, body.version);
    const content = await store.getVersionContent(promptId, from);
    const before = await store.includes().pinsOf(promptId, from);
    const only = body.only === undefined ? undefined : new Set(body.only);
    const keeps = (pin: (typeof before)[number]) =>
      isFixedPointer(pin.pointer) || (only !== undefined && !only.has(pin.included_prompt_id));
    const kept = Object.fromEntries(before.filter(keeps).map((pin) => [pin.reference, pin.included_hash]));
    const repinned = before.filter((pin) => !keeps(pin)).map((pin) => pin.reference);
    const moves = async (version: string) => {
      const after = new Map(
        (await store.includes().pinsOf(promptId, version)).map((p) => [p.reference, p.included_hash]),
      );
      return before
        .filter((pin) => after.has(pin.reference) && after.get(pin.reference) !== pin.included_hash)
        .map((pin) => ({ include: pin.reference, from: pin.included_hash, to: after.get(pin.reference) as string }));
    };
    const sections = content.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled }));
    const draft: SaveVersionBody = {
      sections,
      tools: content.tools as SaveVersionBody["tools"],
      ...(content.model === undefined ? {} : { model: content.model }),
      ...(Object.keys(kept).length === 0 ? {} : { includes: kept }),
    };
    // The pins are taken in the save's transaction; its note is not content, so a save that moves nothing is
    // the version it started from.
    const planned = await this.context.save(caller, promptId, {
      ...draft,
      message: body.message ?? `Includes updated: ${repinned.join(", ")}`.slice(0, 1000),
    });
    const updated = await moves(planned.version);
    const result: IncludesUpdate = {
      id: promptId,
      from_version: from,
      version: planned.version,
      created: planned.created,
      updated,
      outcome: "saved",
      label: null,
    };
    if (!publish) return result;
    result.label = label;
    const fresh = await requirePrompt(store, promptId);
    if ((await labelState(store, fresh, label)).version === planned.version) return { ...result, outcome: "published" };
    if ((await store.labels().protectedNames()).has(label)) {
      const release = await this.context.requestRelease(caller, promptId, {
        label,
        version: planned.version,
        message: noteOf(updated),
      });
      return { ...result, outcome: "release_requested", release };
    }
    try {
      await this.context.publish(caller, promptId, planned.version, label);
      return { ...result, outcome: "published" };
    } catch (error) {
      if (error instanceof GateRefusal) return { ...result, outcome: "blocked", reason: error.message };
      throw error;
    }
  }

  /**
   * The update of each chosen prompt that includes this one (every one whose version `label` serves is behind,
   * when none is chosen), for this prompt's includes only. Each is its own change: one refused (a 403 or 404)
   * is answered beside the others.
   */
  async updateDependents(
    caller: Caller,
    promptId: string,
    body: UpdateDependentsBody,
  ): Promise<{ id: string; results: DependentUpdate[] }> {
    requireWrite(caller, body.publish ?? false, "updating includes", "updating includes and publishing");
    const store = this.context.store(caller);
    await requirePrompt(store, promptId);
    const label = body.label ?? PRODUCTION;
    const chosen =
      body.prompts ??
      [
        ...new Set(
          (await dependentsOf(store, promptId)).dependents
            .filter((d) => d.outdated && d.labels.includes(label))
            .map((d) => d.prompt),
        ),
      ].slice(0, 100);
    const results: DependentUpdate[] = [];
    for (const id of chosen) {
      try {
        results.push(
          await this.update(caller, id, {
            only: [promptId],
            label,
            ...(body.publish === undefined ? {} : { publish: body.publish }),
            ...(body.message === undefined ? {} : { message: body.message }),
          }),
        );
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        results.push({ id, error: error.message, status: error.status });
      }
    }
    return { id: promptId, results };
  }
}

/** A change note naming the pins moved: `Includes updated: safety 3f2a9c1b2c3d → 8b1c2d3e4f5a`. */
function noteOf(updated: IncludesUpdate["updated"]): string {
  if (updated.length === 0) return "Includes updated";
  const named = updated
    .slice(0, NOTED_PINS)
    .map((u) => `${u.include.slice(0, 60)} ${shortHash(u.from)} → ${shortHash(u.to)}`);
  const more = updated.length > NOTED_PINS ? `, and ${updated.length - NOTED_PINS} more` : "";
  return `Includes updated: ${named.join(", ")}${more}`;
}
