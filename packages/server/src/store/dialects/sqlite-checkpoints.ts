import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type SQLite from "better-sqlite3";

/** How often the checkpointer copies what the WAL holds into the database file. */
export const CHECKPOINT_EVERY_MS = 250;
/** SQLite's own threshold (pages of WAL), put back if the checkpointer ever stops. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * The checkpointer's thread, as CommonJS source: run from a string, it is the same code under the tests
 * (TypeScript sources) and the built server. A connection of its own, in WAL mode like the server's; PASSIVE
 * never waits for a reader or the writer, it copies what it can and tries again on the next tick.
 */
const CHECKPOINTER = `
const { parentPort, workerData } = require("node:worker_threads");
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.pragma("synchronous = NORMAL");
const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy, full or read-only for a moment: the next tick tries again, and the server's writes report the fault.
  }
}, workerData.everyMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves SQLite's WAL checkpoints off the event loop. SQLite checkpoints inside the COMMIT that takes the WAL past
 * 1 000 pages, on the connection that wrote: the server's one connection, on its event loop. Copying those pages
 * and syncing the file held every request for tens of milliseconds during an import or a push (bench/results.md,
 * "Heavy work"). The server's connection stops checkpointing, and a thread with a connection of its own
 * checkpoints every CHECKPOINT_EVERY_MS. Returns what stops it, before the connection closes.
 */
export function checkpointOffTheLoop(database: SQLite.Database, path: string): () => void {
  const worker = new Worker(CHECKPOINTER, {
    eval: true,
    workerData: {
      path,
      driver: createRequire(import.meta.url).resolve("better-sqlite3"),
      everyMs: CHECKPOINT_EVERY_MS,
    },
  });
  worker.unref();
  let running = true;
  const sqliteCheckpointsAgain = () => {
    if (!running) return;
    running = false;
    // Without its checkpointer the WAL would grow without end: SQLite's own checkpoints come back.
    if (database.open) database.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  };
  worker.on("error", sqliteCheckpointsAgain);
  worker.on("exit", sqliteCheckpointsAgain);
  database.pragma("wal_autocheckpoint = 0");
  return () => {
    running = false;
    worker.postMessage("stop");
  };
}
