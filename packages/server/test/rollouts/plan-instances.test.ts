/**
 * Plans across instances (docs/rollouts.md "Plans"), on both databases: two instances on one database, each
 * with its own runner ticking, decide each step exactly once (every decision's event and audit row counted);
 * and a plan started on an instance that then stops is taken on from its row by the next one to start.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Config, defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { openStore, type Store } from "../../src/store/index.js";
import { DATABASES } from "../support/databases.js";
import { plan, planEvents, postArms } from "./plan-support.js";

const FAST = { PROMPTSTORE_OUTCOME_MINUTE_MS: 100, PROMPTSTORE_ROLLOUT_TICK_MS: 20 } as const;
const NEVER = { PROMPTSTORE_OUTCOME_MINUTE_MS: 100, PROMPTSTORE_ROLLOUT_TICK_MS: 3_600_000 } as const;

describe.each(DATABASES)("rollout plans on several instances ($name)", (database) => {
  const running: { app: App; store: Store }[] = [];
  let drop: () => Promise<void> = async () => {};
  const secrets = SecretBox.ephemeral();

  afterEach(async () => {
    for (const { app, store } of running.splice(0)) {
      await app.server.close();
      await store.close();
    }
    await drop();
  });

  async function instance(url: string, config: Partial<Config>) {
    const store = await openStore(url, { poolSize: 5 });
    const app = await buildApp({ store, config: defaultConfig(config), secrets, logger: false });
    const entry = { app, store };
    running.push(entry);
    return entry;
  }

  const caller = (app: App, key: string) => async (method: string, path: string, body?: unknown) => {
    const res = await app.server.inject({
      method: method as "GET",
      url: path,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: res.json() as any };
  };

  async function setUp(app: App) {
    const org = await app.tenants.createOrganization("org", "unlimited");
    const project = await app.tenants.createProject(org.id, "p");
    const key = (await app.tenants.createApiKey(project.id)).key;
    const call = caller(app, key);
    const v1 = (await call("POST", "/api/v2/prompts", { id: "bot", name: "Bot", markdown: "# A\none", publish: true }))
      .body.data.version as string;
    const v2 = (await call("PUT", "/api/v2/prompts/bot", { markdown: "# A\ntwo" })).body.data.version as string;
    return { key, v1, v2 };
  }

  async function until(read: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 1500; i++) {
      if (await read()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("not reached in 30 s");
  }

  it("two instances decide each step exactly once", async () => {
    const db = await database.create();
    drop = db.drop;
    const a = await instance(db.url, FAST);
    const b = await instance(db.url, FAST);
    const { key, v1, v2 } = await setUp(a.app);
    const onA = caller(a.app, key);
    const onB = caller(b.app, key);
    const started = await onA("POST", "/api/v2/prompts/bot/labels/production/plan", {
      version: v2,
      ...plan([{ percent: 10 }, { percent: 20 }, { percent: 30 }, { percent: 40 }, { percent: 50 }]),
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await postArms(
      onB,
      "bot",
      { candidate: v2, current: v1, candidateOk: 95, currentOk: 95 },
      started.body.data.started_at,
    );
    await b.app.outcomes.flush();
    await until(
      async () => (await onA("GET", "/api/v2/prompts/bot/labels/production/plan")).body.data.status === "completed",
    );
    const events = await planEvents(a.store, "bot");
    expect(events.map((e) => [e.type, e.plan.step, e.plan.percent])).toEqual([
      ["rollout.advanced", 1, 20],
      ["rollout.advanced", 2, 30],
      ["rollout.advanced", 3, 40],
      ["rollout.advanced", 4, 50],
      ["rollout.completed", 4, 100],
    ]);
    const audit = await a.store.db
      .selectFrom("audit_log")
      .select("action")
      .where("action", "in", ["rollout.started", "rollout.advanced", "rollout.completed", "rollout.aborted"])
      .orderBy("id")
      .execute();
    expect(audit.map((r) => r.action)).toEqual([
      "rollout.started",
      "rollout.advanced",
      "rollout.advanced",
      "rollout.advanced",
      "rollout.advanced",
      "rollout.completed",
    ]);
    expect((await onB("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v2);
  });

  it("a restart goes on from the plan's row", async () => {
    const db = await database.create();
    drop = db.drop;
    const first = await instance(db.url, NEVER);
    const { key, v1, v2 } = await setUp(first.app);
    const call = caller(first.app, key);
    const started = await call("POST", "/api/v2/prompts/bot/labels/production/plan", {
      version: v2,
      ...plan([{ percent: 10 }, { percent: 50 }]),
    });
    await postArms(
      call,
      "bot",
      { candidate: v2, current: v1, candidateOk: 95, currentOk: 95 },
      started.body.data.started_at,
    );
    // Stopping writes what the instance holds; its runner never ticked.
    const stopped = running.splice(0, 1)[0] as { app: App; store: Store };
    await stopped.app.server.close();
    await stopped.store.close();
    expect(await planEvents(await openAndKeep(db.url), "bot")).toEqual([]);

    const next = await instance(db.url, FAST);
    const again = caller(next.app, key);
    await until(
      async () => (await again("GET", "/api/v2/prompts/bot/labels/production/plan")).body.data.status === "completed",
    );
    expect((await planEvents(next.store, "bot")).map((e) => [e.type, e.plan.step])).toEqual([
      ["rollout.advanced", 1],
      ["rollout.completed", 1],
    ]);
  });

  /** A store on the database, closed with the instances. */
  async function openAndKeep(url: string): Promise<Store> {
    const store = await openStore(url, { poolSize: 1 });
    const closing = { app: { server: { close: async () => {} } } as unknown as App, store };
    running.push(closing);
    return store;
  }
});
