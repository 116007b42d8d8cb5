import { planLimits } from "@promptstore/core/accounts/plans";
import { auditQuery } from "@promptstore/core/audit";
import {
  type ApiKeyView,
  changeRoleBody,
  createKeyBody,
  createProjectBody,
  type UsageView,
} from "@promptstore/core/dashboard";
import { notFound } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RateLimiter } from "../../ratelimit/limiter.js";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { TenantService } from "../../service/accounts/tenant-service.js";
import type { AuditService } from "../../service/audit-service.js";
import type { ApiKeyInfo } from "../../store/accounts/tenants.js";
import { ok } from "../envelope.js";
import { RATE_WINDOW_SECONDS, rateLimitKey } from "../guards/rate-limit.js";
import { storableIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";
import { projectIdParam } from "./prompt-routes.js";
import { userOf } from "./session-auth.js";

const keyView = ({ id, prefix, scope, created_at, last_used_at, revoked_at }: ApiKeyInfo): ApiKeyView => ({
  id,
  prefix,
  scope,
  created_at,
  last_used_at,
  revoked_at,
});

const KINDS: Record<string, string> = { orgId: "organization", userId: "member", keyId: "key" };
const param = (request: FastifyRequest, name: string): string =>
  storableIdParam(request.params, name, KINDS[name] ?? name);

/**
 * Owners' screens: projects, members and roles, the plan and its usage, API keys, and the audit trail (owners
 * only: it names members and keys, like the members screen).
 */
export function registerDashboardSettingsRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  tenants: TenantService,
  limiter: RateLimiter,
  audit: AuditService,
): void {
  const session = { config: { session: true } };
  const ownerOfOrg = (request: FastifyRequest) => accounts.orgAccess(userOf(request), param(request, "orgId"), "admin");
  const ownerOfProject = (request: FastifyRequest) =>
    accounts.projectCaller(userOf(request), projectIdParam(request), "admin");

  app.post("/api/dashboard/orgs/:orgId/projects", session, async (request, reply) => {
    const org = await ownerOfOrg(request);
    const body = parseInput(createProjectBody, request.body, "body");
    const { id, name, created_at } = await tenants.createProject(org.id, body.name);
    reply.code(201);
    return ok({ id, name, created_at });
  });

  app.get("/api/dashboard/orgs/:orgId/members", session, async (request) => {
    const org = await ownerOfOrg(request);
    return ok({ members: await accounts.members(org.id) });
  });

  app.patch("/api/dashboard/orgs/:orgId/members/:userId", session, async (request) => {
    const org = await ownerOfOrg(request);
    const body = parseInput(changeRoleBody, request.body, "body");
    return ok(await accounts.changeRole(org.id, param(request, "userId"), body.role));
  });

  app.delete("/api/dashboard/orgs/:orgId/members/:userId", session, async (request) => {
    const org = await ownerOfOrg(request);
    await accounts.removeMember(org.id, param(request, "userId"));
    return ok({ removed: true });
  });

  app.get("/api/dashboard/orgs/:orgId/usage", session, async (request) => {
    const org = await ownerOfOrg(request);
    const plan = planLimits(org.plan);
    const limit = plan.requestsPerMinute;
    const rate = limit === null ? null : await limiter.peek(rateLimitKey(org.id), limit, RATE_WINDOW_SECONDS);
    const usage: UsageView = {
      org: { id: org.id, name: org.name, plan: org.plan },
      limits: { prompts_per_project: plan.promptsPerProject, requests_per_minute: limit },
      rate:
        rate === null
          ? null
          : {
              limit: rate.limit,
              used: rate.limit - rate.remaining,
              remaining: rate.remaining,
              reset_seconds: rate.resetSeconds,
            },
      projects: await tenants.projectsWithCounts(org.id),
    };
    return ok(usage);
  });

  app.get("/api/dashboard/projects/:projectId/keys", session, async (request) => {
    const project = await ownerOfProject(request);
    return ok({ keys: (await tenants.listApiKeys(project.projectId)).map(keyView) });
  });

  app.post("/api/dashboard/projects/:projectId/keys", session, async (request, reply) => {
    const project = await ownerOfProject(request);
    const body = parseInput(createKeyBody, request.body, "body");
    const created = await tenants.createApiKey(project.projectId, { scope: body?.scope, actor: project.actor });
    reply.code(201);
    return ok({ ...keyView(created), key: created.key });
  });

  app.get("/api/dashboard/projects/:projectId/audit", session, async (request) => {
    const project = await ownerOfProject(request);
    const query = parseInput(auditQuery, request.query, "query");
    return ok(await audit.list(project, query));
  });

  app.delete("/api/dashboard/projects/:projectId/keys/:keyId", session, async (request) => {
    const project = await ownerOfProject(request);
    const revoked = await tenants.revokeApiKey(param(request, "keyId"), {
      projectId: project.projectId,
      actor: project.actor,
    });
    if (!revoked) throw notFound(`key ${param(request, "keyId").slice(0, 64)} not found`);
    return ok(keyView(revoked));
  });
}
