import type { PromptEvent } from "@promptstore/core/events";
import type { Caller } from "./access.js";

/**
 * Who acted, as a caller may see it (docs/decisions.md, "`saved_by` for read keys"). A `read` key is an
 * application: it has no need to know its authors, so it sees that a person acted (`user`) but not their
 * e-mail address. A key prefix names no one and stays. Dashboard sessions and write or publish keys see all.
 * Every answer that names an actor (history, releases, the events stream) passes through here.
 */
export function seesAuthors(caller: Pick<Caller, "access" | "role">): boolean {
  return caller.role !== undefined || caller.access !== "read";
}

/** `user:<e-mail>` as "a person"; a key prefix names no one and stays. */
function withoutEmail<T extends string | null>(actor: T): T {
  return (actor?.startsWith("user:") ? "user" : actor) as T;
}

export function authorShownTo<T extends string | null>(caller: Pick<Caller, "access" | "role">, actor: T): T {
  return seesAuthors(caller) ? actor : withoutEmail(actor);
}

type ReleaseActors = { requested_by: string; decided_by: string | null };

function releaseWithoutAuthors<R extends ReleaseActors>(release: R): R {
  return { ...release, requested_by: withoutEmail(release.requested_by), decided_by: withoutEmail(release.decided_by) };
}

/** The release's requester and decider as the caller may see them. */
export function releaseShownTo<R extends ReleaseActors>(caller: Pick<Caller, "access" | "role">, release: R): R {
  return seesAuthors(caller) ? release : releaseWithoutAuthors(release);
}

/** Every `user:<e-mail>` in a text (a plan's end reason names who ended it) as "a person". */
const withoutEmails = (text: string | null): string | null => text?.replace(/user:\S+/g, "user") ?? null;

type PlanActors = {
  end_reason: string | null;
  decision?: { by: string };
  last_decision?: { by: string } | null;
  decisions?: { by: string }[];
};

function planWithoutAuthors<P extends PlanActors & { started_by?: string }>(plan: P): P {
  const shown: P = { ...plan, end_reason: withoutEmails(plan.end_reason) };
  if (plan.started_by !== undefined) shown.started_by = withoutEmail(plan.started_by);
  if (plan.decision) shown.decision = { ...plan.decision, by: withoutEmail(plan.decision.by) };
  if (plan.last_decision) shown.last_decision = { ...plan.last_decision, by: withoutEmail(plan.last_decision.by) };
  if (plan.decisions) shown.decisions = plan.decisions.map((d) => ({ ...d, by: withoutEmail(d.by) }));
  return shown;
}

/** A rollout plan (docs/rollouts.md "Plans") as the caller may see who started, decided and ended it. */
export function planShownTo<P extends PlanActors & { started_by: string }>(
  caller: Pick<Caller, "access" | "role">,
  plan: P,
): P {
  return seesAuthors(caller) ? plan : planWithoutAuthors(plan);
}

/** An event as a stream of a caller that does not see authors is sent it: release and plan events name people. */
export function eventWithoutAuthors(event: PromptEvent): PromptEvent {
  let shown = event;
  if (event.release !== undefined) shown = { ...shown, release: releaseWithoutAuthors(event.release) };
  if (event.plan !== undefined) shown = { ...shown, plan: planWithoutAuthors(event.plan) };
  return shown;
}
