import type { AuditPage, AuditQuery } from "@promptstore/core/audit";
import { badRequest } from "@promptstore/core/errors";
import type { Kysely } from "kysely";
import { readAudit } from "../store/audit.js";
import type { Database } from "../store/schema.js";
import type { Caller } from "./access.js";
import { requireAccess } from "./access.js";

const DEFAULT_PAGE = 50;
const CURSOR = /^[1-9][0-9]{0,17}$/;

/**
 * Reads a project's audit trail (the changes themselves write it, in their own transactions). Only a
 * publish key or a project owner reads it: it names who did what (e-mails, key prefixes) and when, which a
 * production application's read key has no need to know.
 */
export class AuditService {
  constructor(private readonly db: Kysely<Database>) {}

  async list(caller: Caller, query: AuditQuery = {}): Promise<AuditPage> {
    requireAccess(caller, "publish", "reading the audit trail");
    const limit = query.limit ?? DEFAULT_PAGE;
    const before = query.cursor === undefined ? undefined : decode(query.cursor);
    const rows = await readAudit(this.db, caller, { before, limit: limit + 1 });
    const entries = rows.slice(0, limit);
    const last = entries[entries.length - 1];
    return { entries, next_cursor: rows.length > limit && last ? encode(last.id) : null };
  }
}

const encode = (id: string): string => Buffer.from(`a${id}`).toString("base64url");

function decode(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (text.startsWith("a") && CURSOR.test(text.slice(1))) return Number(text.slice(1));
  throw badRequest("cursor: is not a valid cursor; pass next_cursor from the previous page");
}
