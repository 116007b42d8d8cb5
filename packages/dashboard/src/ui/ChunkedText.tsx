import type { ReactNode } from "react";
import { flowingParts, textChunks } from "./text-chunks";

/** Text inside a `<pre>`, drawn block by block (see text-chunks.ts); `mark` renders each block's text. */
export function ChunkedText({ text, mark = (t) => t }: { text: string; mark?: (text: string) => ReactNode }) {
  const chunks = textChunks(text);
  if (chunks.length === 1) return <>{mark(text)}</>;
  return (
    <>
      {chunks.map((chunk, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the blocks of one text, in order
        <span key={i} className="text-chunk">
          {mark(chunk)}
        </span>
      ))}
    </>
  );
}

/** A stretch of text that flows with its neighbours (a diff's common part): see `flowingParts`. */
export function FlowingText({ text, afterBreak = false }: { text: string; afterBreak?: boolean }) {
  const parts = flowingParts(text, afterBreak);
  if (!parts) return <>{text}</>;
  return (
    <>
      {parts.head}
      <ChunkedText text={parts.middle} />
      {parts.tail === "" ? null : parts.tail}
    </>
  );
}
