import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { hashPassword } from "../../src/service/accounts/passwords.js";
import { useTestApp } from "../support/app.js";
import {
  browser,
  member,
  newUser,
  PASSWORD,
  promptsUrl,
  sessionCookie,
  signIn,
  signInRequest,
} from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

const WRONG = { success: false, error: "the e-mail or the password is wrong" };

describe.each(DATABASES)("dashboard sessions behind a trusted HTTPS proxy ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_TRUST_PROXY: true });

  it("accepts the browser's Origin when the proxy rewrote Host but forwarded it", async () => {
    const email = await newUser(t, t.project.orgId, "viewer");
    const headers = { origin: "https://prompts.example.com", host: "127.0.0.1:3000" };
    expect((await signInRequest(t, email, PASSWORD, headers)).status).toBe(403);
    const forwarded = { ...headers, "x-forwarded-host": "prompts.example.com", "x-forwarded-proto": "https" };
    expect((await signInRequest(t, email, PASSWORD, forwarded)).status).toBe(200);
  });

  it("compares the scheme too: an https Origin over a proxy that forwarded plain http is refused, and the reverse", async () => {
    const email = await newUser(t, t.project.orgId, "viewer");
    const base = { host: "127.0.0.1:3000", "x-forwarded-host": "prompts.example.com" };
    const overHttp = { ...base, origin: "https://prompts.example.com", "x-forwarded-proto": "http" };
    const refused = await signInRequest(t, email, PASSWORD, overHttp);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: "origin: is not this server" });
    const downgraded = { ...base, origin: "http://prompts.example.com", "x-forwarded-proto": "https" };
    expect((await signInRequest(t, email, PASSWORD, downgraded)).status).toBe(403);
  });

  it("marks the cookie Secure when the request came over HTTPS", async () => {
    const email = await newUser(t, t.project.orgId, "viewer");
    const res = await signInRequest(t, email, PASSWORD, { "x-forwarded-proto": "https" });
    expect(String(res.headers["set-cookie"])).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
    const plain = await signInRequest(t, email, PASSWORD, { "x-forwarded-proto": "http" });
    expect(String(plain.headers["set-cookie"])).toMatch(/; HttpOnly; SameSite=Lax$/);
  });
});

describe.each(DATABASES)("dashboard sessions ($name)", (database) => {
  const t = useTestApp(database);

  describe("sign-in", () => {
    it("refuses an https Origin on a plain-http server: an origin is scheme, host and port", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      const res = await signInRequest(t, email, PASSWORD, { origin: "https://localhost:3000", host: "localhost:3000" });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, error: "origin: is not this server" });
      expect(
        (await signInRequest(t, email, PASSWORD, { origin: "http://localhost:3000", host: "localhost:3000" })).status,
      ).toBe(200);
    });

    it("answers the session and sets an HTTP-only, SameSite=Lax cookie (not Secure over plain HTTP)", async () => {
      const email = await newUser(t, t.project.orgId, "editor");
      const res = await signInRequest(t, email, PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        user: { id: expect.stringMatching(/^usr_/), email, must_change_password: false },
        csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
        memberships: [
          {
            org: { id: t.project.orgId, name: expect.any(String), plan: "free" },
            role: "editor",
            projects: [{ id: t.project.projectId, name: expect.any(String), created_at: expect.any(String) }],
          },
        ],
      });
      const cookie = String(res.headers["set-cookie"]);
      expect(cookie).toMatch(/^ps_session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/);
    });

    it("a client cannot claim HTTPS by itself: X-Forwarded-Proto is ignored unless the proxy is trusted", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      const direct = await signInRequest(t, email, PASSWORD, { "x-forwarded-proto": "https" });
      expect(String(direct.headers["set-cookie"])).toMatch(/; HttpOnly; SameSite=Lax$/);
    });

    it("e-mail is case-insensitive", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      expect((await signInRequest(t, email.toUpperCase(), PASSWORD)).status).toBe(200);
    });

    it("gives the same answer for an unknown e-mail and a wrong password, and sets no cookie", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      const wrongPassword = await signInRequest(t, email, "not the password");
      const unknownEmail = await signInRequest(t, "nobody@example.com", PASSWORD);
      for (const res of [wrongPassword, unknownEmail]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(WRONG);
        expect(res.headers["set-cookie"]).toBeUndefined();
      }
    });

    it("names the field of malformed input", async () => {
      const res = await t.request("POST", "/api/dashboard/session", { key: null, body: { email: "x", password: "y" } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: "email: must be an e-mail address" });
      const extra = await t.request("POST", "/api/dashboard/session", {
        key: null,
        body: { email: "a@example.com", password: "y", admin: true },
      });
      expect(extra.body).toEqual({ success: false, error: "admin: is not a known field" });
    });

    it("refuses a sign-in posted from another origin", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      const res = await signInRequest(t, email, PASSWORD, { origin: "https://evil.example", host: "localhost:80" });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, error: "origin: is not this server" });
    });
  });

  describe("throttling", () => {
    it("an account is locked after 5 failures, even for the right password, with Retry-After", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      for (let n = 0; n < 5; n++) expect((await signInRequest(t, email, `wrong ${n}`)).status).toBe(401);
      const locked = await signInRequest(t, email, PASSWORD);
      expect(locked.status).toBe(429);
      expect(locked.body.error).toMatch(/^too many sign-in attempts; retry in \d+ s$/);
      expect(Number(locked.headers["retry-after"])).toBeGreaterThan(800);
      // Another account from the same address is not affected.
      const other = await newUser(t, t.project.orgId, "viewer");
      expect((await signInRequest(t, other, PASSWORD)).status).toBe(200);
    });

    it("an unknown e-mail is locked the same way, so the throttle does not reveal which accounts exist", async () => {
      for (let n = 0; n < 5; n++) expect((await signInRequest(t, "ghost@example.com", "x")).status).toBe(401);
      expect((await signInRequest(t, "ghost@example.com", "x")).status).toBe(429);
    });

    it("an address is refused after 20 attempts whatever the accounts", async () => {
      for (let n = 0; n < 20; n++) {
        expect((await signInRequest(t, `guess-${n}@example.com`, "x")).status).toBe(401);
      }
      const res = await signInRequest(t, "guess-20@example.com", "x");
      expect(res.status).toBe(429);
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(200);
      // A different client address still gets through.
      const email = await newUser(t, t.project.orgId, "viewer");
      const elsewhere = await t.app.server.inject({
        method: "POST",
        url: "/api/dashboard/session",
        remoteAddress: "10.9.8.7",
        headers: { "content-type": "application/json" },
        payload: JSON.stringify({ email, password: PASSWORD }),
      });
      expect(elsewhere.statusCode).toBe(200);
    });
  });

  describe("session lifetime", () => {
    it("a session reads itself; without a cookie, or with a made-up one, it is 401", async () => {
      const b = await member(t, "viewer");
      expect((await b.call("GET", "/api/dashboard/session")).body.data.user.email).toBe(b.email);
      const none = await t.request("GET", "/api/dashboard/session", { key: null });
      expect(none.status).toBe(401);
      expect(none.body.error).toMatch(/^session: not signed in/);
      const fake = browser(t, b.email, b.userId, "made-up-token", b.csrf);
      expect((await fake.call("GET", "/api/dashboard/session")).status).toBe(401);
    });

    it("an expired session is refused, deleted, and its cookie cleared", async () => {
      const b = await member(t, "viewer");
      await t.store.db.updateTable("sessions").set({ expires_at: "2000-01-01T00:00:00.000Z" }).execute();
      const res = await b.call("GET", "/api/dashboard/session");
      expect(res.status).toBe(401);
      expect(String(res.headers["set-cookie"])).toBe(
        "ps_session=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax",
      );
      expect(await t.store.db.selectFrom("sessions").selectAll().execute()).toEqual([]);
    });

    it("expired sessions of anyone are swept at the next sign-in", async () => {
      const old = await member(t, "viewer");
      await t.store.db.updateTable("sessions").set({ expires_at: "2000-01-01T00:00:00.000Z" }).execute();
      const fresh = await member(t, "viewer");
      const rows = await t.store.db.selectFrom("sessions").select("user_id").execute();
      expect(rows).toEqual([{ user_id: fresh.userId }]);
      expect(old.userId).not.toBe(fresh.userId);
    });

    it("sign-out ends the session on the server, not only in the browser", async () => {
      const b = await member(t, "viewer");
      const out = await b.call("DELETE", "/api/dashboard/session");
      expect(out.body).toEqual({ success: true, data: { signed_out: true } });
      // The old cookie, replayed, is dead.
      expect((await b.call("GET", "/api/dashboard/session")).status).toBe(401);
    });

    it("a password change ends every session and gives this browser a new one", async () => {
      const email = await newUser(t, t.project.orgId, "editor");
      const laptop = await signIn(t, email);
      const phone = await signIn(t, email);
      const res = await laptop.call("POST", "/api/dashboard/password", {
        body: { current_password: PASSWORD, new_password: "a brand new passphrase" },
      });
      expect(res.status).toBe(200);
      const fresh = browser(t, email, laptop.userId, sessionCookie(res)!, res.body.data.csrf_token);
      expect((await fresh.call("GET", promptsUrl(t.project.projectId))).status).toBe(200);
      expect((await laptop.call("GET", "/api/dashboard/session")).status).toBe(401);
      expect((await phone.call("GET", "/api/dashboard/session")).status).toBe(401);
      expect((await signInRequest(t, email, PASSWORD)).status).toBe(401);
      expect((await signInRequest(t, email, "a brand new passphrase")).status).toBe(200);
    });

    it("a password change needs the current password (unless one-time) and a new one of 12+ characters", async () => {
      const b = await member(t, "editor");
      const wrong = await b.call("POST", "/api/dashboard/password", {
        body: { current_password: "nope", new_password: "long enough passphrase" },
      });
      expect(wrong.status).toBe(403);
      expect(wrong.body).toEqual({ success: false, error: "current_password: is wrong" });
      const missing = await b.call("POST", "/api/dashboard/password", {
        body: { new_password: "long enough passphrase" },
      });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ success: false, error: "current_password: required" });
      const short = await b.call("POST", "/api/dashboard/password", {
        body: { current_password: PASSWORD, new_password: "short" },
      });
      expect(short.status).toBe(400);
      expect(short.body).toEqual({ success: false, error: "new_password: must be at least 12 characters" });
      // Neither attempt changed anything or ended the session.
      expect((await b.call("GET", "/api/dashboard/session")).status).toBe(200);
    });

    it("a one-time password opens only the password change", async () => {
      const created = await t.app.accounts.createUser("first@example.com");
      await t.app.accounts.store.addMembership(t.project.orgId, created!.user.id, "owner");
      const b = await signIn(t, "first@example.com", created!.password);
      expect((await b.call("GET", "/api/dashboard/session")).body.data.user.must_change_password).toBe(true);
      const refused = await b.call("GET", promptsUrl(t.project.projectId));
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/^password: choose a new password first/);
      // Right after a one-time sign-in, the new password alone is enough.
      const changed = await b.call("POST", "/api/dashboard/password", { body: { new_password: "my own passphrase" } });
      expect(changed.body.data.user.must_change_password).toBe(false);
      const after = browser(t, b.email, b.userId, sessionCookie(changed)!, changed.body.data.csrf_token);
      expect((await after.call("GET", promptsUrl(t.project.projectId))).status).toBe(200);
    });
  });

  describe("CSRF", () => {
    it("refuses a mutation without the token, or with another session's, and stores nothing", async () => {
      const b = await member(t, "editor");
      const other = await member(t, "editor");
      const body = { name: "Bot", markdown: "# Role\nHi" };
      for (const csrf of [null, "", other.csrf, `${b.csrf}x`]) {
        const res = await b.call("POST", promptsUrl(t.project.projectId), { body, csrf });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          success: false,
          error: "x-csrf-token: missing or wrong CSRF token; reload the page",
        });
      }
      expect(await t.store.db.selectFrom("prompts").selectAll().execute()).toEqual([]);
      expect((await b.call("POST", promptsUrl(t.project.projectId), { body })).status).toBe(201);
    });

    it("sign-out and password change need the token too", async () => {
      const b = await member(t, "editor");
      expect((await b.call("DELETE", "/api/dashboard/session", { csrf: null })).status).toBe(403);
      const change = await b.call("POST", "/api/dashboard/password", {
        body: { current_password: PASSWORD, new_password: "another passphrase" },
        csrf: null,
      });
      expect(change.status).toBe(403);
      expect((await b.call("GET", "/api/dashboard/session")).status).toBe(200);
    });

    it("refuses a mutation from another origin even with the token", async () => {
      const b = await member(t, "editor");
      const res = await b.call("POST", promptsUrl(t.project.projectId), {
        body: { name: "Bot", markdown: "# Role\nHi" },
        headers: { origin: "https://evil.example" },
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe("origin: is not this server");
    });
  });
});

describe.each(DATABASES)("dashboard sessions at the standard password cost ($name)", (database) => {
  // Every other test hashes at the test cost (test/support/binary.ts); this one at what a server uses by default.
  const t = useTestApp(database, { PROMPTSTORE_PASSWORD_HASH_COST: defaultConfig().PROMPTSTORE_PASSWORD_HASH_COST });

  describe("secrets at rest", () => {
    it("stores passwords as scrypt hashes (OWASP's N=2^15, r=8, p=3) and sessions as SHA-256 of the cookie", async () => {
      expect(defaultConfig().PROMPTSTORE_PASSWORD_HASH_COST).toBe("standard");
      const b = await member(t, "viewer");
      const user = await t.store.db
        .selectFrom("users")
        .selectAll()
        .where("email", "=", b.email)
        .executeTakeFirstOrThrow();
      expect(user.password_hash).toMatch(/^scrypt\$32768\$8\$3\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
      expect(user.password_hash).not.toContain(PASSWORD);
      const sessions = await t.store.db.selectFrom("sessions").selectAll().execute();
      expect(sessions.map((s) => s.token_hash)).toEqual([
        (await import("node:crypto")).createHash("sha256").update(b.cookie).digest("hex"),
      ]);
    });

    it("signs in with a password hashed at the test cost too: each hash keeps its own parameters", async () => {
      const email = await newUser(t, t.project.orgId, "viewer");
      await t.store.db
        .updateTable("users")
        .set({ password_hash: await hashPassword(PASSWORD, "test") })
        .where("email", "=", email)
        .execute();
      expect((await signInRequest(t, email, PASSWORD)).status).toBe(200);
      expect((await signInRequest(t, email, `${PASSWORD}x`)).body).toEqual(WRONG);
    });
  });
});
