/**
 * The sign-in lock under parallel attempts (issue 35, item 2): an attempt takes its slot before its password
 * is checked, so of 30 sent at once no more than the limit are ever checked. On PostgreSQL the attempts are
 * split between two instances that share the database's counters, as a fleet does (`serve`'s limiter).
 */
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { createRateLimiter } from "../../src/ratelimit/across-instances.js";
import { openStore } from "../../src/store/index.js";
import { PASSWORD, sessionCookie } from "../support/dashboard.js";
import { DATABASES, freshStore } from "../support/databases.js";

const LOCKED = /^too many sign-in attempts; retry in \d+ s$/;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One instance on SQLite (its in-process limiter); two on PostgreSQL, each with the shared limiter. */
async function instances(database: (typeof DATABASES)[number]): Promise<App[]> {
  const fresh = await freshStore(database);
  cleanups.push(() => fresh.close());
  const count = database.name === "postgres" ? 2 : 1;
  const apps: App[] = [];
  for (let n = 0; n < count; n++) {
    const store = n === 0 ? fresh.store : await openStore(fresh.url, { poolSize: 20 });
    const rateLimiter =
      database.name === "postgres" ? await createRateLimiter({ store, databaseUrl: fresh.url }) : undefined;
    const app = await buildApp({
      store,
      config: defaultConfig(),
      logger: false,
      ...(rateLimiter ? { rateLimiter } : {}),
    });
    cleanups.push(async () => {
      await app.server.close();
      if (n > 0) await store.close();
    });
    apps.push(app);
  }
  return apps;
}

async function call(
  app: App,
  method: "POST" | "GET",
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await app.server.inject({
    method,
    url,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

async function account(app: App, email: string): Promise<void> {
  const org = await app.tenants.createOrganization(`org-${email}`, "free");
  const created = await app.accounts.createUser(email, PASSWORD);
  await app.accounts.store.addMembership(org.id, created!.user.id, "editor");
}

function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

describe.each(DATABASES)("the sign-in lock under parallel attempts ($name)", (database) => {
  it("30 parallel wrong current passwords on one session: 5 are checked (403), 25 refused (429)", async () => {
    const apps = await instances(database);
    const first = apps[0]!;
    await account(first, "racer@example.com");
    const signedIn = await call(first, "POST", "/api/dashboard/session", {
      email: "racer@example.com",
      password: PASSWORD,
    });
    expect(signedIn.status).toBe(200);
    const headers = { cookie: `ps_session=${sessionCookie(signedIn)}`, "x-csrf-token": signedIn.body.data.csrf_token };

    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        call(
          apps[n % apps.length]!,
          "POST",
          "/api/dashboard/password",
          { current_password: `guess number ${n}`, new_password: "a brand new passphrase" },
          headers,
        ),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 403: 5, 429: 25 });
    for (const a of answers.filter((a) => a.status === 403)) {
      expect(a.body).toEqual({ success: false, error: "current_password: is wrong" });
    }
    for (const a of answers.filter((a) => a.status === 429)) expect(a.body.error).toMatch(LOCKED);
    // The account is locked now, for the right password too, on every instance.
    for (const app of apps) {
      const right = await call(
        app,
        "POST",
        "/api/dashboard/password",
        { current_password: PASSWORD, new_password: "a brand new passphrase" },
        headers,
      );
      expect(right.status).toBe(429);
    }
  });

  it("30 parallel sign-ins to one account with wrong passwords: 5 are checked (401), 25 refused (429)", async () => {
    const apps = await instances(database);
    await account(apps[0]!, "target@example.com");
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        call(apps[n % apps.length]!, "POST", "/api/dashboard/session", {
          email: "target@example.com",
          password: `wrong guess ${n}`,
        }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 5, 429: 25 });
    for (const a of answers.filter((a) => a.status === 429)) expect(a.body.error).toMatch(LOCKED);
  });

  it("the password form has a per-address limit: 20 checks from one address in 5 minutes, across accounts", async () => {
    const apps = await instances(database);
    const app = apps[0]!;
    const sessions: Record<string, string>[] = [];
    // Five accounts, each well under its own lock (4 wrong each), all from one address.
    for (let n = 0; n < 5; n++) {
      await account(app, `spread-${n}@example.com`);
      const signedIn = await call(app, "POST", "/api/dashboard/session", {
        email: `spread-${n}@example.com`,
        password: PASSWORD,
      });
      sessions.push({ cookie: `ps_session=${sessionCookie(signedIn)}`, "x-csrf-token": signedIn.body.data.csrf_token });
    }
    // 5 sign-ins spent 5 of the address's 20; 15 wrong current passwords are checked, then the address is out.
    const statuses: number[] = [];
    for (let n = 0; n < 20; n++) {
      const body = { current_password: `guess ${n}`, new_password: "a brand new passphrase" };
      statuses.push((await call(app, "POST", "/api/dashboard/password", body, sessions[n % 5])).status);
    }
    expect(statuses).toEqual([...Array(15).fill(403), ...Array(5).fill(429)]);
  });
});
