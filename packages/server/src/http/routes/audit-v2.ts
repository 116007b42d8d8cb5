import { AUDIT_ACTIONS, auditQuery } from "@promptstore/core/audit";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AuditService } from "../../service/audit-service.js";
import { ok } from "../envelope.js";
import { callerOf } from "../guards/auth.js";
import type { Operation } from "../openapi/operation.js";
import { parseInput } from "../validate.js";

const auditEntryOut = z.strictObject({
  id: z.string(),
  at: z.iso.datetime().describe("ISO 8601, UTC, milliseconds"),
  actor: z
    .string()
    .describe("key:<prefix>, user:<e-mail> (user:<e-mail> via MCP client <name> through a sign-in) or cli"),
  action: z.enum(AUDIT_ACTIONS),
  target: z
    .string()
    .describe("The prompt id, the key id, the organization id (plan.changed), or <client name> (<grant id>) (app.*)"),
  before: z
    .string()
    .nullable()
    .describe("What the action moved from: a version hash (prompts), a key's or a grant's scope, a plan"),
  after: z.string().nullable().describe("What it moved to; `revoked` for a revoked key or grant, null for a deletion"),
});

export const auditPageOut = z.strictObject({
  entries: z.array(auditEntryOut),
  next_cursor: z.string().nullable().describe("Pass it as cursor for the next (older) page; null at the end"),
});

export const AUDIT_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v2/audit",
    operationId: "listAuditEntries",
    summary: "The project's audit trail, newest first: saves, publishes, deletions, keys, plan changes (publish key)",
    query: auditQuery,
    status: 200,
    response: auditPageOut,
    errors: [400, 401, 403, 429],
  },
];

export function registerAuditRoutes(app: FastifyInstance, audit: AuditService): void {
  app.get("/api/v2/audit", { config: { auth: true } }, async (request) => {
    const caller = callerOf(request);
    const query = parseInput(auditQuery, request.query, "query");
    return ok(await audit.list(caller, query));
  });
}
