/**
 * The word diff of two texts, lines first: jsdiff's word diff of a whole 250 KB section takes about a
 * second (tokenising and comparing every word), most of it on text both sides share. Comparing lines
 * first finds the few changed lines at once; words are then compared only within each changed stretch,
 * so a one-paragraph edit of a big prompt costs what an edit of a small one does.
 */
import { type Change, diffLines, diffWordsWithSpace } from "diff";

/** Past this, a stretch of changed lines is shown as removed and added lines rather than word by word. */
const WORD_DIFF_TIMEOUT_MS = 300;
const LINE_DIFF_TIMEOUT_MS = 1000;

export interface TextPart {
  value: string;
  added?: boolean;
  removed?: boolean;
}

/**
 * The parts of `a` → `b`: each side is exactly the common parts plus its own (removed for `a`, added
 * for `b`), whitespace included, so a column reads as its text. Null when the texts are equal, or too
 * different to compare in time (the sides are then shown whole).
 */
export function textDiff(a: string, b: string): TextPart[] | null {
  if (a === b) return null;
  const lines = diffLines(a, b, { timeout: LINE_DIFF_TIMEOUT_MS });
  if (!lines) return null;
  const parts: TextPart[] = [];
  const push = (part: TextPart) => {
    const last = parts[parts.length - 1];
    // Neighbours of the same kind are joined: fewer elements to draw.
    if (last && !!last.added === !!part.added && !!last.removed === !!part.removed) last.value += part.value;
    else parts.push({ ...part });
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as Change;
    const next = lines[i + 1];
    if (line.removed && next?.added) {
      const words = diffWordsWithSpace(line.value, next.value, { timeout: WORD_DIFF_TIMEOUT_MS });
      if (words) for (const w of words) push(strip(w));
      else {
        push({ value: line.value, removed: true });
        push({ value: next.value, added: true });
      }
      i++;
    } else push(strip(line));
  }
  return parts;
}

const strip = (change: Change): TextPart =>
  change.added
    ? { value: change.value, added: true }
    : change.removed
      ? { value: change.value, removed: true }
      : { value: change.value };
