/**
 * How long heavy work may hold the event loop before the I/O waiting behind it (an application's read) is
 * served. Heavy work (an unpaged list of 100 000 prompts, a search over them) is cut into pieces of about a
 * millisecond; this is how long pieces run back to back, across every heavy job of the process.
 */
export const TURN_MS = 4;

/**
 * How long one piece may hold the lane. A query that hangs (a connection lost without a reset) would otherwise
 * stop every heavy job of the process; past this the lane goes to the next piece, and the late one runs on.
 */
export const LANE_MAX_MS = 5_000;

let turnStarted = Number.NEGATIVE_INFINITY;
let scheduled = false;
/**
 * The piece that holds the lane: from its start until the promise it returned settles, awaits on the database
 * included, or for LANE_MAX_MS.
 */
let holder: symbol | undefined;
let holdExpires: NodeJS.Timeout | undefined;
const waiting: (() => void)[] = [];

/**
 * Runs one piece of heavy work when its turn comes, and holds the lane until the piece's promise settles: one
 * piece at a time in the process, whatever it awaits. A job alone goes on at once while the current turn has
 * budget left; once the turn has used its TURN_MS, or while a piece runs or others wait, it waits in line. Each
 * turn of the event loop (its check phase, after the poll phase has taken the requests waiting) wakes the first
 * in line, so the jobs take turns, one piece each, and four lists streaming at once hold the loop no longer than
 * one does.
 *
 * Why the lane lasts until the piece settles, not only until it starts: on PostgreSQL a piece awaits its rows,
 * and the driver parses them in whichever poll phase they arrive. Pieces that had only waited for their start
 * (four lists' queries in flight at once) had their rows parsed, labelled and turned into JSON back to back in
 * one poll phase, ahead of an application's read; the server's loop ran at a whole core. A piece must not run
 * another piece inside itself: it would wait for its own lane.
 */
export async function inTurn<T>(piece: () => Promise<T> | T): Promise<T> {
  const me = Symbol();
  if (holder !== undefined || waiting.length > 0 || performance.now() - turnStarted >= TURN_MS) {
    // Woken by startTurn, which hands the lane over before anything else can take it.
    await new Promise<void>((resolve) => {
      waiting.push(() => {
        hold(me);
        resolve();
      });
      nextTurn();
    });
  } else {
    hold(me);
  }
  try {
    return await piece();
  } finally {
    release(me);
  }
}

function hold(piece: symbol): void {
  holder = piece;
  holdExpires = setTimeout(() => release(piece), LANE_MAX_MS).unref();
}

function release(piece: symbol): void {
  if (holder !== piece) return;
  holder = undefined;
  clearTimeout(holdExpires);
  if (waiting.length > 0) nextTurn();
}

function nextTurn(): void {
  if (scheduled || holder !== undefined) return;
  scheduled = true;
  setImmediate(startTurn);
}

/** Runs in a check phase; the next piece's is set when this one's settles. */
function startTurn(): void {
  scheduled = false;
  if (holder !== undefined) return;
  turnStarted = performance.now();
  waiting.shift()?.();
}
