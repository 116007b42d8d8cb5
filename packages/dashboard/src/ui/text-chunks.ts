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

/**
 * How a stretch of text that flows with its neighbours (a diff's common part between marked words) is
 * drawn: `head` inline, `middle` in blocks (textChunks), `tail` inline; null when it is drawn whole, inline.
 * Each edge of the blocks stands for one newline of the text, and two blank lines would vanish: a newline
 * that ends the inline text just before a block draws nothing, so when what precedes ended with one
 * (`afterBreak`) and the stretch starts with another, the blocks start with that empty line; and the blocks'
 * last line, when empty, draws nothing either, so it goes to the tail, which starts with its newline.
 */
export function flowingParts(
  text: string,
  afterBreak: boolean,
  linesPerChunk = 60,
): { head: string; middle: string; tail: string } | null {
  const first = text.indexOf("\n");
  const last = text.lastIndexOf("\n");
  if (first < 0 || last <= first) return null;
  const start = first === 0 && afterBreak ? 0 : first + 1;
  const end = text[last - 1] === "\n" && last - 1 >= start ? last - 1 : last;
  const middle = text.slice(start, end);
  if (textChunks(middle, linesPerChunk).length === 1) return null;
  return { head: text.slice(0, first), middle, tail: text.slice(end + 1) };
}
