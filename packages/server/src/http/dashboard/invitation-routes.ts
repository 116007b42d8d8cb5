import { invitationAccountBody, invitationTokenBody, inviteBody } from "@promptstore/core/dashboard";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { InvitationService } from "../../service/accounts/invitation-service.js";
import { ok } from "../envelope.js";
import { storableIdParam } from "../routes/params.js";
import { parseInput } from "../validate.js";
import { checkSameOrigin, userOf } from "./session-auth.js";
import { sessionView } from "./session-routes.js";

/**
 * Invitations: owners invite, list and revoke on the members screen; the invitee reads what the link offers,
 * then accepts while signed in as the invited e-mail. The token travels in bodies, never in
 * a path, so no request log holds it.
 */
export function registerInvitationRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  invitations: InvitationService,
): void {
  const session = { config: { session: true } };
  const owner = async (request: FastifyRequest) => {
    const user = userOf(request);
    const org = await accounts.orgAccess(user, storableIdParam(request.params, "orgId", "organization"), "admin");
    return { orgId: org.id, actor: `user:${user.email}` };
  };

  const invite = async (request: FastifyRequest) => {
    const by = await owner(request);
    const body = parseInput(inviteBody, request.body, "body");
    return invitations.invite(by, body.email, body.role);
  };
  app.post("/api/dashboard/orgs/:orgId/invitations", session, async (request, reply) => {
    const created = await invite(request);
    reply.code(201);
    return ok(created);
  });
  // The old "add member": an invitation too, so no one is made a member without consent.
  app.post("/api/dashboard/orgs/:orgId/members", session, async (request, reply) => {
    const created = await invite(request);
    reply.code(201);
    return ok(created);
  });

  app.get("/api/dashboard/orgs/:orgId/invitations", session, async (request) => {
    const by = await owner(request);
    return ok({ invitations: await invitations.list(by.orgId) });
  });

  app.delete("/api/dashboard/orgs/:orgId/invitations/:invitationId", session, async (request) => {
    const by = await owner(request);
    return ok(await invitations.revoke(by, storableIdParam(request.params, "invitationId", "invitation")));
  });

  app.post("/api/dashboard/invitations/preview", async (request) => {
    checkSameOrigin(request);
    const body = parseInput(invitationTokenBody, request.body, "body");
    return ok(await invitations.preview(body.token));
  });

  app.post("/api/dashboard/invitations/accept", session, async (request) => {
    const body = parseInput(invitationTokenBody, request.body, "body");
    const { user, csrfToken } = request.account as NonNullable<typeof request.account>;
    await invitations.accept(body.token, user);
    return ok(await sessionView(accounts, user, csrfToken));
  });

  // Changed (issue 35): no longer creates the account; kept so an old page gets a clear answer, not a 404.
  app.post("/api/dashboard/invitations/account", async (request) => {
    checkSameOrigin(request);
    const body = parseInput(invitationAccountBody, request.body, "body");
    return invitations.refuseNewAccount(body.token);
  });
}
