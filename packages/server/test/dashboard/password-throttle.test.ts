import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member, newUser, PASSWORD, signIn, signInRequest } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

const LOCKED = /^too many sign-in attempts; retry in \d+ s$/;
const change = (current: string) => ({ body: { current_password: current, new_password: "a brand new passphrase" } });

describe.each(DATABASES)("the password form counts against the sign-in lock ($name)", (database) => {
  const t = useTestApp(database);

  it("five wrong current passwords lock the account: the form and sign-in answer 429 with Retry-After", async () => {
    const b = await member(t, "editor");
    for (let n = 0; n < 5; n++) {
      const wrong = await b.call("POST", "/api/dashboard/password", change(`guess ${n}`));
      expect(wrong.status).toBe(403);
      expect(wrong.body).toEqual({ success: false, error: "current_password: is wrong" });
    }
    // The sixth try is not checked at all, even with the right password.
    const refused = await b.call("POST", "/api/dashboard/password", change(PASSWORD));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(LOCKED);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(800);
    const signIn = await signInRequest(t, b.email, PASSWORD);
    expect(signIn.status).toBe(429);
    expect(signIn.body.error).toMatch(LOCKED);
    // Nothing changed: the old password is still the password once the lock ends, and the session lives.
    expect((await b.call("GET", "/api/dashboard/session")).status).toBe(200);
  });

  it("sign-in failures and password-form failures add up to the same lock", async () => {
    const email = await newUser(t, t.project.orgId, "viewer");
    const b = await signIn(t, email);
    for (let n = 0; n < 3; n++) expect((await signInRequest(t, email, `wrong ${n}`)).status).toBe(401);
    for (let n = 0; n < 2; n++) {
      expect((await b.call("POST", "/api/dashboard/password", change(`guess ${n}`))).status).toBe(403);
    }
    expect((await signInRequest(t, email, PASSWORD)).status).toBe(429);
    const refused = await b.call("POST", "/api/dashboard/password", change(PASSWORD));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(LOCKED);
  });

  it("an account locked by sign-in failures is refused on the password form before its password is checked", async () => {
    const email = await newUser(t, t.project.orgId, "viewer");
    const b = await signIn(t, email);
    for (let n = 0; n < 5; n++) expect((await signInRequest(t, email, `wrong ${n}`)).status).toBe(401);
    const refused = await b.call("POST", "/api/dashboard/password", change("any guess"));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(LOCKED);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(800);
  });

  it("a right current password changes it and counts nothing; another account is not affected", async () => {
    const b = await member(t, "editor");
    for (let n = 0; n < 4; n++)
      expect((await b.call("POST", "/api/dashboard/password", change(`g ${n}`))).status).toBe(403);
    expect((await b.call("POST", "/api/dashboard/password", change(PASSWORD))).status).toBe(200);
    const other = await member(t, "editor");
    expect((await other.call("POST", "/api/dashboard/password", change(PASSWORD))).status).toBe(200);
  });

  it("a malformed body is still the 400 naming the field, and is not counted", async () => {
    const b = await member(t, "editor");
    for (let n = 0; n < 6; n++) {
      const short = await b.call("POST", "/api/dashboard/password", {
        body: { current_password: "x", new_password: "short" },
      });
      expect(short.status).toBe(400);
      expect(short.body).toEqual({ success: false, error: "new_password: must be at least 12 characters" });
    }
    expect((await signInRequest(t, b.email, PASSWORD)).status).toBe(200);
  });
});
