/**
 * How long heavy work may hold the event loop before the I/O waiting behind it (an application's read) is
 * served. Heavy work (an unpaged list of 100 000 prompts, a search over them) is cut into pieces of about a
 * millisecond; this is how long pieces run back to back, across every heavy job of the process.
 */
export const TURN_MS = 4;

let turnStarted = Number.NEGATIVE_INFINITY;
let scheduled = false;
const waiting: (() => void)[] = [];

/**
 * Awaited before each piece of heavy work. A job alone goes on at once while the current turn has budget left;
 * once the turn has used its TURN_MS, or while other jobs wait, it waits in line. Each turn of the event loop
 * (its check phase, after the poll phase has taken the requests waiting) wakes the first in line, so the jobs
 * take turns, one piece each, and four lists streaming at once hold the loop no longer than one does. Waking
 * them all at once would not do: their pieces await the database, and each would pass the check before any
 * had spent the budget.
 */
export async function takeTurn(): Promise<void> {
  if (waiting.length === 0 && performance.now() - turnStarted < TURN_MS) return;
  await new Promise<void>((resolve) => {
    waiting.push(resolve);
    nextTurn();
  });
}

function nextTurn(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(startTurn);
}

/** Runs in a check phase; one set from there runs in the next loop's. */
function startTurn(): void {
  scheduled = false;
  turnStarted = performance.now();
  waiting.shift()?.();
  if (waiting.length > 0) nextTurn();
}
