import { keyScopeSchema } from "@promptstore/core/accounts/key-scopes";
import { AppError } from "@promptstore/core/errors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AuthorizationService } from "../../service/oauth/authorization.js";
import type { ConnectedApps } from "../../service/oauth/connected-apps.js";
import { userOf } from "../dashboard/session-auth.js";
import { ok } from "../envelope.js";
import { storableIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";
import { siteOf } from "./site.js";

const decisionBody = z.discriminatedUnion(
  "decision",
  [
    z.strictObject({ decision: z.literal("deny") }),
    z.strictObject({
      decision: z.literal("allow"),
      project_id: z.string({ error: "required" }).min(1, "required").max(64, "must be at most 64 characters"),
      scope: keyScopeSchema,
    }),
  ],
  { error: "must be allow or deny" },
);

const requestId = (request: FastifyRequest) => {
  const id = (request.params as { requestId?: unknown }).requestId;
  if (typeof id !== "string" || id.length > 64) throw new AppError("not_found", "request: not found");
  return id;
};

/**
 * The dashboard's side of MCP sign-in: the consent screen reads a pending request and answers it (the
 * session's CSRF token required, as for every dashboard mutation); Settings → Connected apps lists and
 * revokes grants.
 */
export function registerConsentRoutes(
  app: FastifyInstance,
  authorization: AuthorizationService,
  connected: ConnectedApps,
  publicUrl: string | undefined,
): void {
  const session = { config: { session: true } };

  app.get("/api/dashboard/oauth/requests/:requestId", session, async (request) =>
    ok(await authorization.consent(userOf(request), requestId(request))),
  );

  app.post("/api/dashboard/oauth/requests/:requestId", session, async (request) => {
    const body = parseInput(decisionBody, request.body, "body");
    const redirect = await authorization.decide(
      userOf(request),
      requestId(request),
      body.decision === "deny" ? { allow: false } : { allow: true, projectId: body.project_id, scope: body.scope },
      siteOf(request, publicUrl),
    );
    return ok({ redirect_to: redirect });
  });

  app.get("/api/dashboard/oauth/grants", session, async (request) => {
    const { org } = request.query as { org?: unknown };
    const user = userOf(request);
    if (org === undefined) return ok({ grants: await connected.mine(user) });
    if (typeof org !== "string" || org.length > 64)
      throw new AppError("bad_request", "org: must be an organization id");
    return ok({ grants: await connected.ofOrganization(user, org) });
  });

  app.delete("/api/dashboard/oauth/grants/:grantId", session, async (request) => {
    await connected.revoke(userOf(request), storableIdParam(request.params, "grantId", "connected app"));
    return ok({ revoked: true });
  });
}
