import { expandIncludes } from "@promptstore/core/prompts/includes";
import type { IncludeState, PromptView } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { promptViewQuery } from "../api/queries";
import { Comparison } from "../history/DiffView";
import { shortHash } from "../ui/format";
import { ErrorState, Loading } from "../ui/States";
import { useIncludeTexts } from "./use-include-texts";
import "../history/history.css";

/**
 * The diff of a version's expanded text, as it is (old pins) and as an update would make it (each outdated
 * include of `prompts`, or every one, at what its pointer names now): the history's comparison.
 */
export function ExpandedDiff({
  projectId,
  promptId,
  version,
  includes,
  prompts,
}: {
  projectId: string;
  promptId: string;
  version: string;
  includes: readonly IncludeState[];
  /** Only the includes of these prompts move; all outdated ones when absent. */
  prompts?: readonly string[];
}) {
  const read = useQuery(promptViewQuery(projectId, promptId, version, false));
  const moves = (i: IncludeState) =>
    i.outdated && i.current !== null && (prompts === undefined || prompts.includes(i.prompt));
  const refs = includes.map((i) => ({
    reference: i.include,
    prompt: i.prompt,
    ...(i.section === null ? {} : { section: i.section }),
    pointer: i.pointer,
    written: true,
  }));
  const pins = Object.fromEntries(includes.map((i) => [i.include, moves(i) ? (i.current as string) : i.version]));
  const texts = useIncludeTexts(projectId, refs, pins);
  const states = [...texts.values()];
  const ready = states.every((t) => t.state === "ready");
  const problem = states.find((t) => t.state === "problem");
  // The texts are read again each render; what they hold is named by the pins, once every one is ready.
  const textsKey = ready ? JSON.stringify([...texts].map(([r, t]) => [r, t.state === "ready" ? t.version : ""])) : "";
  // biome-ignore lint/correctness/useExhaustiveDependencies: textsKey stands for texts
  const after = useMemo((): PromptView | null => {
    if (!read.data || textsKey === "") return null;
    const taken = new Map([...texts].map(([reference, t]) => [reference, t.state === "ready" ? t.text : ""]));
    return {
      ...read.data,
      version: `${read.data.version}+update`,
      sections: read.data.sections.map((s) => ({
        ...s,
        content: s.source === undefined ? s.content : expandIncludes(s.source, taken),
      })),
    };
  }, [read.data, textsKey]);

  if (read.isPending) return <Loading label="Loading the version…" />;
  if (read.isError) return <ErrorState error={read.error} onRetry={() => read.refetch()} />;
  if (problem?.state === "problem") return <p className="field-error">{problem.problem}</p>;
  if (!after) return <Loading label="Loading the included versions…" />;
  return (
    <Comparison before={read.data} after={after} labels={{ from: shortHash(read.data.version), to: "new pins" }} />
  );
}
