import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EVENT_TYPES } from "@promptstore/core/events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cli, cliJson, startServer } from "../support/binary.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";
import { eventually, type Receiver, startReceiver, verify } from "./receiver.js";

const OTHER_KEY = "feedface".repeat(8);
const FAST = { PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: "true", PROMPTSTORE_WEBHOOK_RETRY_SCALE: "0.001" };

describe.each(DATABASES)("a store restored under another secret key ($name)", (database: TestDatabase) => {
  let dir: string;
  let hook: Receiver;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "promptstore-rekey-"));
    hook = await startReceiver();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await hook.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const fresh = async () => {
    const created = await database.create();
    cleanups.push(created.drop);
    return created.url;
  };

  it("restores and starts; restore names the endpoints to rotate; the API, the CLI and deliveries say so; rotating fixes it", {
    timeout: 120_000,
  }, async () => {
    // The source store, under the test key (PostgreSQL) or its own key file (SQLite).
    const source = await fresh();
    await cliJson(source, ["org", "create", "acme", "--plan", "unlimited"]);
    const project = await cliJson(source, ["project", "create", "acme", "Web"]);
    const made = await cli(source, ["webhook", "create", "Web", "--url", hook.url, "--json"], FAST);
    expect(made.code).toBe(0);
    const endpoint = JSON.parse(made.stdout);
    const file = join(dir, "store.backup");
    expect((await cli(source, ["backup", file])).code).toBe(0);

    // Restored where the server has another key.
    const target = await fresh();
    const env = { PROMPTSTORE_SECRET_KEY: OTHER_KEY };
    const restored = await cli(target, ["restore", file], env);
    expect(restored.code).toBe(0);
    expect(restored.stderr).toBe("");
    const lines = restored.stdout.trim().split("\n");
    expect(lines.slice(1)).toEqual([
      "1 webhook endpoint(s) hold a signing secret this server's secret key cannot open (the backup was taken under another key). Their deliveries fail until each secret is rotated:",
      `  ${endpoint.id}  (project ${project.project.id}, ${hook.url}): promptstore webhook update ${endpoint.id} --rotate-secret`,
      "then give each receiver its new secret. Or start with the old key to keep the old secrets.",
    ]);
    const listed = await cli(target, ["webhook", "list", "Web"], env);
    expect(listed.stdout).toBe(
      `${endpoint.id}  enabled  ${hook.url}  ${EVENT_TYPES.join(",")}  SECRET NEEDS ROTATING (promptstore webhook update ${endpoint.id} --rotate-secret)\n`,
    );

    const server = await startServer(target, { ...env, ...FAST });
    cleanups.push(() => server.stop());
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { "x-api-key": project.key.key, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return (await res.json()) as any;
    };
    expect((await api("GET", `/api/v2/webhooks/${endpoint.id}`)).data.secret_needs_rotation).toBe(true);
    // Nothing else is lost: the key and the project work.
    expect(
      (await api("POST", "/api/v2/prompts", { name: "One", sections: [{ title: "A", content: "a" }] })).success,
    ).toBe(true);
    const [failing] = await eventually(
      async () => (await api("GET", `/api/v2/webhooks/${endpoint.id}/deliveries`)).data.deliveries,
      (list: any[]) => list[0]?.attempts >= 1,
    );
    expect(failing.last_error).toMatch(
      /^not sent: its signing secret was encrypted with another secret key \(key id [0-9a-f]{16}\); rotate the secret$/,
    );
    expect(hook.requests).toEqual([]);

    const rotation = await cli(target, ["webhook", "update", endpoint.id, "--rotate-secret", "--json"], env);
    expect(rotation.code).toBe(0);
    const res = JSON.parse(rotation.stdout);
    expect(res.secret_needs_rotation).toBe(false);
    await hook.waitFor((r) => r.length === 1, 30_000);
    expect(verify(res.secret, hook.requests[0]!)).toMatchObject({ type: "prompt.created" });
    expect((await api("GET", `/api/v2/webhooks/${endpoint.id}`)).data.secret_needs_rotation).toBe(false);
  });
});
