import type { Role } from "@promptstore/core/dashboard";
import type { Response, TestApp } from "./app.js";

/** A signed-in browser: its cookie and CSRF token, sent with every request it makes. */
export interface Browser {
  email: string;
  userId: string;
  cookie: string;
  csrf: string;
  /** A dashboard request; mutations carry the CSRF token unless `csrf` is given (null: none). */
  call<T = any>(
    method: string,
    url: string,
    options?: { body?: unknown; csrf?: string | null; headers?: Record<string, string> },
  ): Promise<Response<T>>;
}

let counter = 0;
export const PASSWORD = "correct horse battery staple";

/** The session cookie's value from a response's Set-Cookie, or undefined. */
export function sessionCookie(res: Response): string | undefined {
  const header = res.headers["set-cookie"];
  const lines = Array.isArray(header) ? header : header === undefined ? [] : [String(header)];
  const line = lines.find((l) => l.startsWith("ps_session="));
  return line?.slice("ps_session=".length).split(";")[0];
}

export function signInRequest(t: TestApp, email: string, password: string, headers: Record<string, string> = {}) {
  return t.request("POST", "/api/dashboard/session", { key: null, body: { email, password }, headers });
}

/** Signs in with the given credentials and returns the browser, or throws with the answer. */
export async function signIn(t: TestApp, email: string, password = PASSWORD): Promise<Browser> {
  const res = await signInRequest(t, email, password);
  const cookie = sessionCookie(res);
  if (res.status !== 200 || !cookie) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  return browser(t, email, res.body.data.user.id, cookie, res.body.data.csrf_token);
}

export function browser(t: TestApp, email: string, userId: string, cookie: string, csrf: string): Browser {
  return {
    email,
    userId,
    cookie,
    csrf,
    call(method, url, options = {}) {
      const headers: Record<string, string> = { cookie: `ps_session=${cookie}`, ...options.headers };
      const token = options.csrf === undefined ? csrf : options.csrf;
      if (method !== "GET" && token !== null) headers["x-csrf-token"] = token;
      return t.request(method, url, {
        key: null,
        headers,
        ...(options.body !== undefined ? { body: options.body } : {}),
      });
    },
  };
}

/** An account with a chosen password (no one-time password), member of `orgId` with `role`. */
export async function newUser(t: TestApp, orgId: string, role: Role, email?: string): Promise<string> {
  const address = email ?? `user-${++counter}-${Date.now()}@example.com`;
  const created = await t.app.accounts.createUser(address, PASSWORD);
  if (!created) throw new Error(`could not create ${address}`);
  await t.app.accounts.store.addMembership(orgId, created.user.id, role);
  return address;
}

/** A signed-in member of the test app's first organization. */
export async function member(t: TestApp, role: Role): Promise<Browser> {
  return signIn(t, await newUser(t, t.project.orgId, role));
}

export const promptsUrl = (projectId: string) => `/api/dashboard/projects/${projectId}/prompts`;
