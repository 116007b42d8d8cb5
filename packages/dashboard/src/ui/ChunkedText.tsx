import type { ReactNode } from "react";
import { textChunks } from "./text-chunks";

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

/**
 * A stretch of text that flows with its neighbours (a diff's common part between marked words): its
 * first and last lines stay inline, the lines between are drawn as blocks.
 */
export function FlowingText({ text }: { text: string }) {
  const first = text.indexOf("\n");
  const last = text.lastIndexOf("\n");
  if (first <= 0 || last <= first || textChunks(text.slice(first + 1, last)).length === 1) return <>{text}</>;
  return (
    <>
      {text.slice(0, first)}
      <ChunkedText text={text.slice(first + 1, last)} />
      {last + 1 < text.length ? text.slice(last + 1) : null}
    </>
  );
}
