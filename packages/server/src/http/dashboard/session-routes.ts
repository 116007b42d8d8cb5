import { changePasswordBody, type SessionView, signInBody } from "@promptstore/core/dashboard";
import type { FastifyInstance } from "fastify";
import { type AccountService, WrongCurrentPassword } from "../../service/accounts/account-service.js";
import type { User } from "../../store/accounts/accounts.js";
import { ok } from "../envelope.js";
import { parseInput } from "../validate.js";
import {
  accountOf,
  checkSameOrigin,
  clearSessionCookie,
  sessionToken,
  setSessionCookie,
  userOf,
} from "./session-auth.js";
import type { SignInThrottle } from "./signin-throttle.js";

export async function sessionView(accounts: AccountService, user: User, csrfToken: string): Promise<SessionView> {
  return {
    user: { id: user.id, email: user.email, must_change_password: user.must_change_password },
    csrf_token: csrfToken,
    memberships: await accounts.memberships(user),
  };
}

/** Signing in and out, the current session, and changing one's password. */
export function registerSessionRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  throttle: SignInThrottle,
  sessionTtlMs: number,
): void {
  app.post("/api/dashboard/session", async (request, reply) => {
    checkSameOrigin(request);
    const body = parseInput(signInBody, request.body, "body");
    // The attempt counts from here, before the password is checked; only a success gives it back.
    const attempt = await throttle.admit(reply, request.ip, body.email);
    const signedIn = await accounts.signIn(body.email, body.password);
    await attempt.giveBack();
    setSessionCookie(request, reply, signedIn.token, sessionTtlMs);
    return ok(await sessionView(accounts, signedIn.user, signedIn.csrfToken));
  });

  const beforePasswordChange = { config: { session: true, beforePasswordChange: true } };

  app.get("/api/dashboard/session", beforePasswordChange, async (request) => {
    const { user, csrfToken } = accountOf(request);
    return ok(await sessionView(accounts, user, csrfToken));
  });

  app.delete("/api/dashboard/session", beforePasswordChange, async (request, reply) => {
    await accounts.signOut(sessionToken(app, request) as string);
    clearSessionCookie(request, reply);
    return ok({ signed_out: true });
  });

  app.post("/api/dashboard/password", beforePasswordChange, async (request, reply) => {
    const body = parseInput(changePasswordBody, request.body, "body");
    const user = userOf(request);
    // Right after a one-time sign-in no current password is checked, so there is nothing to guess.
    const attempt = user.must_change_password ? undefined : await throttle.admit(reply, request.ip, user.email);
    let signedIn: Awaited<ReturnType<AccountService["changePassword"]>>;
    try {
      signedIn = await accounts.changePassword(user, body.current_password, body.new_password);
    } catch (error) {
      // Only a wrong current password stays counted (a missing one was never a guess).
      if (!(error instanceof WrongCurrentPassword)) await attempt?.giveBack();
      throw error;
    }
    await attempt?.giveBack();
    setSessionCookie(request, reply, signedIn.token, sessionTtlMs);
    return ok(await sessionView(accounts, signedIn.user, signedIn.csrfToken));
  });
}
