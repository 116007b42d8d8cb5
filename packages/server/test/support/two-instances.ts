import { afterEach, beforeEach } from "vitest";
import { type Config, defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { openStore, type Store } from "../../src/store/index.js";
import type { TestDatabase } from "./databases.js";
import type { EventStreamReader } from "./sse.js";

export interface TwoInstances {
  /** Both apps, listening; each with its own pool, caches and LISTEN connection. */
  readonly apps: App[];
  readonly stores: Store[];
  readonly urls: string[];
  /** A key of an unlimited organization's project, made on the first instance. */
  readonly key: string;
  /** Streams opened by the test, closed after it. */
  readonly readers: EventStreamReader[];
  /** A request to one instance with the key; the JSON answer. */
  call(instance: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** Two instances of the app on one fresh PostgreSQL database per test, as behind a load balancer. */
export function useTwoInstances(postgres: TestDatabase, config: Partial<Config> = {}): TwoInstances {
  let drop: () => Promise<void> = async () => {};
  const context = {
    apps: [] as App[],
    stores: [] as Store[],
    urls: [] as string[],
    readers: [] as EventStreamReader[],
    key: "",
    call: (instance: number, method: string, path: string, body?: unknown) =>
      fetch(`${context.urls[instance]}${path}`, {
        method,
        headers: { "x-api-key": context.key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as any })),
  };
  beforeEach(async () => {
    const db = await postgres.create();
    drop = db.drop;
    // One secret key for both, as behind a load balancer: a secret one seals, the other opens.
    const secrets = SecretBox.ephemeral();
    for (let i = 0; i < 2; i++) {
      const store = await openStore(db.url, { poolSize: 10 });
      const app = await buildApp({ store, config: defaultConfig(config), secrets });
      context.stores.push(store);
      context.apps.push(app);
      context.urls.push(await app.server.listen({ port: 0, host: "127.0.0.1" }));
    }
    const org = await context.apps[0]!.tenants.createOrganization("org", "unlimited");
    const project = await context.apps[0]!.tenants.createProject(org.id, "p");
    context.key = (await context.apps[0]!.tenants.createApiKey(project.id)).key;
  });
  afterEach(async () => {
    for (const reader of context.readers.splice(0)) reader.close();
    for (const app of context.apps.splice(0)) await app.server.close();
    for (const store of context.stores.splice(0)) await store.close();
    context.urls.length = 0;
    await drop();
  });
  return context;
}
