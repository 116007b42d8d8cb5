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

export function authorShownTo<T extends string | null>(caller: Pick<Caller, "access" | "role">, actor: T): T {
  if (actor === null || seesAuthors(caller)) return actor;
  return (actor.startsWith("user:") ? "user" : actor) as T;
}

/** The release's requester and decider as the caller may see them. */
export function releaseShownTo<R extends { requested_by: string; decided_by: string | null }>(
  caller: Pick<Caller, "access" | "role">,
  release: R,
): R {
  if (seesAuthors(caller)) return release;
  return {
    ...release,
    requested_by: authorShownTo(caller, release.requested_by),
    decided_by: authorShownTo(caller, release.decided_by),
  };
}

/** An event as a stream of a caller that does not see authors is sent it: only release events name anyone. */
export function eventWithoutAuthors(event: PromptEvent): PromptEvent {
  if (event.release === undefined) return event;
  return { ...event, release: releaseShownTo({ access: "read" }, event.release) };
}
