import { type NewAuditEntry, recordAudit } from "../../store/audit.js";
import type { NewEvent, NewProjectEvent } from "../../store/events.js";
import { now } from "../../store/ids.js";
import type { Store } from "../../store/index.js";
import { type EventSink, ProjectStore } from "../../store/prompts/prompts.js";
import type { ChangeBus } from "../events/change-bus.js";
import { outdatedEvents } from "./includes/outdated.js";
import { GateRefusal } from "./label-moves.js";
import type { PromptChange } from "./prompt-changes.js";

/**
 * How every change of the prompts domain is recorded (PromptService's, the plans', the includes'): its audit
 * rows and events inside its transaction (the sinks queue webhooks from them), the announcement that tells the
 * other instances once it commits, and, after commit, this instance's listeners (caches).
 */
export class ChangeRecorder {
  private readonly sinks: EventSink[] = [];

  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
  ) {}

  /** Hands every change's events to `sink` inside the change's transaction (webhook deliveries). */
  addSink(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /** Called after commit, never before: a cache told early could refill from the old row. */
  changed(projectId: string, promptId: string): void {
    this.bus.publish({ kind: "prompt", projectId, promptId });
  }

  /**
   * Runs a change that may move a label; a move its required evaluation refused rolls back, and the refusal is
   * then written to the audit trail on its own (every gate decision is an audit row).
   */
  async gated<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof GateRefusal) await recordAudit(this.store.db, [error.audit]);
      throw error;
    }
  }

  /**
   * Records a change inside its transaction: the audit rows, the events (which the sinks queue for webhooks),
   * and the announcement that tells other instances once it commits.
   */
  async record(tx: ProjectStore, change: PromptChange): Promise<void> {
    await tx.recordAudit(change.audit);
    // A move of what a pointer names makes the pins of it that served versions of other prompts hold stale.
    const outdated = await outdatedEvents(tx, change.promptId, change.events);
    await tx.recordEvents(outdated.length === 0 ? change.events : [...change.events, ...outdated], this.sinks);
    await tx.announceChange(change.promptId);
  }

  /**
   * Records a change of the project's own (a label's settings) inside its transaction: the audit rows, and the
   * events about no prompt (queued for webhooks by the sinks, announced to the other instances on commit).
   */
  async recordProject(tx: ProjectStore, audit: NewAuditEntry[], events: NewProjectEvent[]): Promise<void> {
    await tx.recordAudit(audit);
    if (events.length === 0) return;
    await tx.recordEvents(events, this.sinks);
    await tx.announceEvents();
  }

  /**
   * Records what happened to a prompt beside its versions and labels (an evaluation's start, stop or end:
   * issue 38) as every change is recorded: audit rows and events in one transaction (webhooks queued by the
   * sinks), announced to the other instances. The event carries the prompt's pointers as they are; a prompt
   * deleted meanwhile records nothing.
   */
  async recordActivity(
    projectId: string,
    promptId: string,
    activity: {
      audit?: NewAuditEntry[];
      event?: Pick<NewEvent, "type" | "version" | "evaluation">;
    },
  ): Promise<void> {
    const store = new ProjectStore(this.store.db, this.store.queries, this.store.channel, this.store.events, projectId);
    const recorded = await store.transaction(async (tx) => {
      const prompt = await tx.getPrompt(promptId);
      if (!prompt) return false;
      if (activity.audit !== undefined) await tx.recordAudit(activity.audit);
      if (activity.event !== undefined) {
        const event: NewEvent = {
          ...activity.event,
          prompt_id: promptId,
          production_version: prompt.production_version,
          latest_version: prompt.latest_version,
          at: now(),
        };
        await tx.recordEvents([event], this.sinks);
        await tx.announceChange(promptId);
      }
      return activity.event !== undefined;
    });
    if (recorded) this.changed(projectId, promptId);
  }
}
