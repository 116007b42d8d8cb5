import type { PlanName } from "@promptstore/core/accounts/plans";
import { type Config, defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import type { RateLimiter } from "../../src/ratelimit/limiter.js";
import type { Caller } from "../../src/service/access.js";
import { TEST_PASSWORD_COST } from "./binary.js";
import { freshStore, type TestDatabase } from "./databases.js";

/** A real app on a fresh database, listening on a loopback port, with one project and its key. */
export interface ListeningApp {
  app: App;
  url: string;
  key: string;
  orgId: string;
  /** The project's caller, for seeding through the service directly. */
  caller: Caller;
  /** A request with the project's key; the parsed envelope. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function listeningApp(
  database: TestDatabase,
  options: { plan?: PlanName; rateLimiter?: RateLimiter; config?: Partial<Config> } = {},
): Promise<ListeningApp> {
  const fresh = await freshStore(database);
  const app = await buildApp({
    store: fresh.store,
    config: defaultConfig({ ...TEST_PASSWORD_COST, ...options.config }),
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
  });
  const plan = options.plan ?? "unlimited";
  const org = await app.tenants.createOrganization("org", plan);
  const project = await app.tenants.createProject(org.id, "Project");
  const key = (await app.tenants.createApiKey(project.id)).key;
  const url = await app.server.listen({ port: 0, host: "127.0.0.1" });
  return {
    app,
    url,
    key,
    orgId: org.id,
    caller: { projectId: project.id, projectName: project.name, orgId: org.id, plan, actor: "test", access: "publish" },
    async call(method, path, body) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await app.server.close();
      await fresh.close();
    },
  };
}
