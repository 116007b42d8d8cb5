import type { IncludesUpdate } from "@promptstore/core/views";
import { shortHash } from "../ui/format";

/** What an update did, in a sentence. */
export function outcomeText(result: IncludesUpdate): string {
  const saved = result.created
    ? `Saved version ${shortHash(result.version)} with the new pins`
    : result.version === result.from_version
      ? `Nothing to update: version ${shortHash(result.version)} already pins what its includes follow`
      : `Version ${shortHash(result.version)} already has the new pins`;
  switch (result.outcome) {
    case "saved":
      return `${saved}.`;
    case "published":
      return `${saved}; it is now in ${result.label}.`;
    case "release_requested":
      return `${saved}; ${result.label} is protected, so a release request waits for an owner's approval.`;
    case "blocked":
      return `${saved}; ${result.label} did not move: ${result.reason ?? "its required evaluation has not passed"}`;
  }
}
