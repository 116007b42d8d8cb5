import type { PlanName } from "@promptstore/core/accounts/plans";
import { afterEach, beforeEach } from "vitest";
import { type Config, defaultConfig } from "../../src/config.js";
import { type App, type AppOptions, buildApp } from "../../src/http/app.js";
import type { Caller } from "../../src/service/access.js";
import type { Store } from "../../src/store/index.js";
import { TEST_PASSWORD_COST } from "./binary.js";
import { freshStore, type TestDatabase } from "./databases.js";

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface RequestOptions {
  body?: unknown;
  /** A raw payload sent as is (with its own content type). */
  payload?: string | Buffer;
  key?: string | null;
  headers?: Record<string, string>;
}

export interface TestProject {
  orgId: string;
  projectId: string;
  key: string;
  keyId: string;
}

export interface TestApp {
  app: App;
  store: Store;
  /** The first project's key (free plan). */
  key: string;
  project: TestProject;
  request<T = any>(method: string, url: string, options?: RequestOptions): Promise<Response<T>>;
  /** Another project, in a new organization unless `orgId` is given. */
  newProject(options?: { plan?: PlanName; orgId?: string }): Promise<TestProject>;
  close(): Promise<void>;
}

let counter = 0;

/** A real app on a real, fresh database of the given dialect, driven through inject(). */
export async function testApp(
  database: TestDatabase,
  overrides: Partial<Config> = {},
  options: { logger?: AppOptions["logger"]; oauthDocuments?: AppOptions["oauthDocuments"] } = {},
): Promise<TestApp> {
  const fresh = await freshStore(database);
  const app = await buildApp({
    store: fresh.store,
    // Passwords at the test cost (test/support/binary.ts says why) unless the test says otherwise.
    config: defaultConfig({ ...TEST_PASSWORD_COST, ...overrides }),
    logger: options.logger ?? false,
    ...(options.oauthDocuments ? { oauthDocuments: options.oauthDocuments } : {}),
  });

  const newProject = async (options: { plan?: PlanName; orgId?: string } = {}): Promise<TestProject> => {
    const orgId =
      options.orgId ?? (await app.tenants.createOrganization(`org-${++counter}`, options.plan ?? "free")).id;
    const project = await app.tenants.createProject(orgId, `Project ${++counter}`);
    const key = await app.tenants.createApiKey(project.id);
    return { orgId, projectId: project.id, key: key.key, keyId: key.id };
  };
  const project = await newProject();

  const request = async <T>(method: string, url: string, options: RequestOptions = {}): Promise<Response<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? project.key : options.key;
    if (key !== null) headers["x-api-key"] = key;
    let payload = options.payload;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await app.server.inject({
      method: method as "GET",
      url,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });
    let body: any = res.body;
    try {
      body = res.json();
    } catch {
      // not JSON: the test will say so
    }
    return { status: res.statusCode, body, headers: res.headers };
  };

  return {
    app,
    store: fresh.store,
    key: project.key,
    project,
    request,
    newProject,
    async close() {
      await app.server.close();
      await fresh.close();
    },
  };
}

/** The test project's organization put on the unlimited plan, and a caller of the project with every access. */
export async function unlimitedCaller(t: TestApp): Promise<Caller> {
  await t.app.tenants.setPlan(t.project.orgId, "unlimited");
  return {
    projectId: t.project.projectId,
    projectName: "",
    orgId: t.project.orgId,
    plan: "unlimited",
    actor: "test",
    access: "publish",
  };
}

/** A valid create body; `n` varies the content so each call makes a distinct version. */
export function promptBody(n = 0, extra: Record<string, unknown> = {}) {
  return {
    name: `Prompt ${n}`,
    description: "test prompt",
    sections: [
      { title: "Role", content: `You are assistant number ${n} for {{ company }}.` },
      { title: "Output Format", content: "Answer in {{ language }}." },
    ],
    ...extra,
  };
}

/**
 * Registers a fresh test app per test (before each, closed after each) and returns a stand-in that always
 * forwards to the current one, so a suite writes `const t = useTestApp(database)` and nothing else.
 */
export function useTestApp(database: TestDatabase, overrides: Partial<Config> = {}): TestApp {
  let current: TestApp | undefined;
  beforeEach(async () => {
    current = await testApp(database, overrides);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as TestApp, {
    get(_target, property) {
      if (!current) throw new Error("useTestApp: used outside a test");
      const value = current[property as keyof TestApp];
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
}
