import type { IncludeRef } from "@promptstore/core/prompts/includes";
import { useQueries } from "@tanstack/react-query";
import { isApiError } from "../api/client";
import { promptViewQuery } from "../api/queries";
import { errorText } from "../ui/States";
import { pointedVersion, takenText } from "./expand";

/** Where one include of a text stands for a preview: its text, or why there is none (yet). */
export type IncludeText =
  | { state: "loading" }
  | { state: "problem"; problem: string }
  | { state: "ready"; version: string; text: string };

/**
 * The text each include takes: from its pin when given (`pins`, by reference), else from the version its pointer
 * names now (as a save would pin it). Reads of the included prompts, which serve their includes expanded.
 */
export function useIncludeTexts(
  projectId: string,
  refs: readonly IncludeRef[],
  pins: Readonly<Record<string, string>> = {},
): Map<string, IncludeText> {
  const unpinned = [...new Set(refs.filter((r) => pins[r.reference] === undefined).map((r) => r.prompt))];
  const latest = useQueries({
    queries: unpinned.map((prompt) => ({ ...promptViewQuery(projectId, prompt, "latest", false), retry: false })),
  });
  const latestOf = new Map(unpinned.map((prompt, i) => [prompt, latest[i]]));
  const targets = refs.map((ref): string | IncludeText => {
    const pin = pins[ref.reference];
    if (pin !== undefined) return pin;
    const read = latestOf.get(ref.prompt);
    if (!read || read.isPending) return { state: "loading" };
    if (read.isError) return { state: "problem", problem: problemOf(read.error, ref.prompt) };
    const version = pointedVersion(read.data, ref.pointer);
    return typeof version === "string" ? version : { state: "problem", ...version };
  });
  const wanted = targets.flatMap((t, i) =>
    typeof t === "string" ? [[(refs[i] as IncludeRef).prompt, t] as const] : [],
  );
  const versions = useQueries({
    queries: wanted.map(([prompt, version]) => ({
      ...promptViewQuery(projectId, prompt, version, false),
      retry: false,
    })),
  });
  const texts = new Map<string, IncludeText>();
  let next = 0;
  refs.forEach((ref, i) => {
    const target = targets[i] as string | IncludeText;
    if (typeof target !== "string") {
      texts.set(ref.reference, target);
      return;
    }
    const read = versions[next++];
    if (!read || read.isPending) texts.set(ref.reference, { state: "loading" });
    else if (read.isError) texts.set(ref.reference, { state: "problem", problem: problemOf(read.error, ref.prompt) });
    else {
      const taken = takenText(ref, read.data);
      texts.set(
        ref.reference,
        typeof taken === "string"
          ? { state: "ready", version: read.data.version, text: taken }
          : { state: "problem", ...taken },
      );
    }
  });
  return texts;
}

function problemOf(error: unknown, prompt: string): string {
  return isApiError(error) && error.status === 404 ? `${prompt}: ${error.detail}` : errorText(error);
}
