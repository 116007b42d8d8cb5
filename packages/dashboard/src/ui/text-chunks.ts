/**
 * Long text cut into blocks of lines, so the browser lays out only the blocks on screen (each block is
 * `content-visibility: auto`, see `.text-chunk`): a 250 KB prompt in one `<pre>` took seconds to lay out
 * and paint, though a person sees a screenful of it.
 *
 * The newline between two blocks is dropped, since the block boundary breaks the line: the blocks joined
 * with "\n" are the text, and so is what the browser copies. A block never ends with an empty line (a
 * trailing newline draws nothing and the blank line would vanish); it may start with one, which draws.
 */
export function textChunks(text: string, linesPerChunk = 60): string[] {
  const lines = text.split("\n");
  if (lines.length <= linesPerChunk) return [text];
  const chunks: string[] = [];
  let start = 0;
  for (let j = start + linesPerChunk; j < lines.length; j++) {
    if (j - start >= linesPerChunk && lines[j - 1] !== "") {
      chunks.push(lines.slice(start, j).join("\n"));
      start = j;
    }
  }
  chunks.push(lines.slice(start).join("\n"));
  return chunks;
}
