import { AppError } from "@promptstore/core/errors";

/**
 * A failure of the database itself, not of the request: unreachable, restarting, out of disk, read-only.
 * Every surface answers it as 503 with Retry-After; the request may succeed when retried. The transaction
 * it was part of was rolled back; only a connection lost during COMMIT leaves it unknown whether the
 * transaction committed, and then it committed whole or not at all.
 */
export class DatabaseUnavailable extends AppError {
  constructor(
    message: string,
    /** A short, stable name of the fault for logs and metrics: `connection`, `disk_full`, `read_only`, … */
    readonly reason: FaultReason,
    override readonly cause: unknown,
  ) {
    super("unavailable", message);
    this.name = "DatabaseUnavailable";
  }
}

export type FaultReason =
  | "connection"
  | "shutting_down"
  | "too_many_connections"
  | "disk_full"
  | "read_only"
  | "io"
  /** The connection was lost during COMMIT and whether it committed could not be found out. */
  | "commit_unknown";

/** What the driver said of a fault, for an operator (the CLI's error line); never sent to API clients. */
export function underlyingMessage(fault: DatabaseUnavailable): string {
  const cause = fault.cause;
  if (!(cause instanceof Error)) return String(cause);
  // Node gives an AggregateError with no message when every address of a name refused.
  return cause.message || String((cause as { code?: unknown }).code);
}

/** How long a client is told to wait before retrying a request the database could not serve. */
export const RETRY_AFTER_SECONDS = 2;

// Node's socket errors when the server is gone or cannot be reached.
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
// pg's own errors for a connection that ended or never came (it gives them no code).
const PG_CONNECTION_MESSAGES = [
  "Connection terminated",
  "connection error and is not queryable",
  "Client was closed and is not queryable",
  "timeout exceeded when trying to connect",
  "Connection ended unexpectedly",
];

/** The database fault an error is, or undefined when it is anything else (a constraint, a bug). */
export function faultOf(error: unknown): DatabaseUnavailable | undefined {
  if (error instanceof DatabaseUnavailable) return error;
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const reason = typeof code === "string" ? reasonOfCode(code) : undefined;
  const found = reason ?? (PG_CONNECTION_MESSAGES.some((m) => error.message.includes(m)) ? "connection" : undefined);
  return found && new DatabaseUnavailable(MESSAGES[found], found, error);
}

function reasonOfCode(code: string): FaultReason | undefined {
  if (SOCKET_CODES.has(code)) return "connection";
  // PostgreSQL SQLSTATEs (appendix A): 08 connection exception, 57P01-03 shutdown or not yet accepting,
  // 53300 too many connections, 53100 disk full, 58030 I/O error, 25006 read-only transaction (a standby).
  if (code.startsWith("08")) return "connection";
  if (code === "57P01" || code === "57P02" || code === "57P03") return "shutting_down";
  if (code === "53300") return "too_many_connections";
  if (code === "53100") return "disk_full";
  if (code === "58030") return "io";
  if (code === "25006") return "read_only";
  // SQLite's extended result codes as better-sqlite3 names them.
  if (code === "SQLITE_FULL") return "disk_full";
  if (code.startsWith("SQLITE_READONLY")) return "read_only";
  if (code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_CANTOPEN")) return "io";
  if (code.startsWith("SQLITE_BUSY")) return "connection";
  return undefined;
}

const MESSAGES: Record<FaultReason, string> = {
  connection: "database: unavailable (connection failed); retry shortly",
  shutting_down: "database: unavailable (restarting); retry shortly",
  too_many_connections: "database: unavailable (too many connections); retry shortly",
  disk_full: "database: the disk is full; nothing was changed",
  read_only: "database: it is read-only; nothing was changed",
  io: "database: an I/O error occurred; nothing was changed",
  commit_unknown: "database: the connection was lost while committing; the change may have been saved",
};
