import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { ConnectionService } from "../../src/service/playground/connection-service.js";
import { backupStore, restoreStore } from "../../src/store/backup.js";
import { PlaygroundStore } from "../../src/store/playground.js";
import { type TestApp, testApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES, freshStore } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents, toolPrompt } from "../support/playground.js";

const KEY = "sk-live-THE-PROVIDER-KEY-5f0c2e9a71";

describe.each(DATABASES)("model connections ($name)", (database) => {
  let t: TestApp;
  let standIn: StandIn;
  let logLines: string[];
  beforeEach(async () => {
    standIn = await startStandIn(KEY);
    logLines = [];
    // testApp, but with every log line kept (trace and up) to look for the key in.
    const logger = {
      level: "trace",
      stream: new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    };
    t = await testApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true }, { logger });
  });
  afterEach(async () => {
    await t.close();
    await standIn.close();
  });

  const base = () => `/api/dashboard/projects/${t.project.projectId}/connections`;

  it("owners create, change and remove them; the key is sealed at rest and never answered", async () => {
    const owner = await member(t, "owner");
    const created = await owner.call("POST", base(), {
      body: { name: "Stand-in", base_url: standIn.baseUrl, api_key: KEY, models: ["m1", "m2"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(id).toMatch(/^con_[0-9a-f]{24}$/);
    expect(created.body.data).toEqual({
      id,
      name: "Stand-in",
      base_url: standIn.baseUrl,
      models: ["m1", "m2"],
      has_key: true,
      created_at: created.body.data.created_at,
      updated_at: created.body.data.created_at,
    });

    const row = await t.store.db
      .selectFrom("model_connections")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(row.api_key?.startsWith(`enc:v1:${t.app.secrets.keyId}:`)).toBe(true);
    expect(row.api_key).not.toContain(KEY);
    // Round trip, bound to the row: the sealed key opens as this connection's and as no other's.
    expect(t.app.secrets.decrypt(row.api_key as string, `connection:${id}`)).toBe(KEY);
    expect(() => t.app.secrets.decrypt(row.api_key as string, "connection:con_000000000000000000000000")).toThrow();

    const renamed = await owner.call("PATCH", `${base()}/${id}`, { body: { name: "Renamed", models: [] } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: "Renamed", models: [], has_key: true });
    const keyless = await owner.call("PATCH", `${base()}/${id}`, { body: { api_key: "" } });
    expect(keyless.body.data.has_key).toBe(false);

    const listed = await owner.call("GET", base());
    expect(listed.body.data.connections.map((c: { id: string }) => c.id)).toEqual([id]);
    const removed = await owner.call("DELETE", `${base()}/${id}`);
    expect(removed.body.data).toEqual({ id, removed: true });
    expect((await owner.call("DELETE", `${base()}/${id}`)).status).toBe(404);
  });

  it("only owners manage them; editors and viewers list them; API keys have no route to them", async () => {
    const owner = await member(t, "owner");
    const editor = await member(t, "editor");
    const viewer = await member(t, "viewer");
    const body = { name: "X", base_url: standIn.baseUrl, api_key: KEY };
    const byEditor = await editor.call("POST", base(), { body });
    expect(byEditor.status).toBe(403);
    expect(byEditor.body.error).toBe("role: editor may not do this; it needs owner");
    const id = (await owner.call("POST", base(), { body })).body.data.id;
    expect((await editor.call("PATCH", `${base()}/${id}`, { body: { name: "Y" } })).status).toBe(403);
    expect((await viewer.call("DELETE", `${base()}/${id}`)).status).toBe(403);
    expect((await viewer.call("GET", base())).body.data.connections).toHaveLength(1);
    expect((await owner.call("POST", base(), { body, csrf: null })).status).toBe(403);
    expect((await t.request("GET", base())).status).toBe(401);
  });

  it("refuses bad input naming the field, and private addresses unless the operator allows them", async () => {
    const owner = await member(t, "owner");
    const bad = await owner.call("POST", base(), { body: { name: "X", base_url: "ftp://example.com" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("base_url: must be an http:// or https:// URL");
    const noName = await owner.call("POST", base(), { body: { name: " ", base_url: "https://api.example.com/v1" } });
    expect(noName.body.error).toBe("name: must not be empty");

    const strict = await testApp(database);
    try {
      const strictOwner = await member(strict, "owner");
      const refused = await strictOwner.call(
        "POST",
        `/api/dashboard/projects/${strict.project.projectId}/connections`,
        {
          body: { name: "Ollama", base_url: "http://127.0.0.1:11434/v1" },
        },
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe(
        "base_url: refused: 127.0.0.1, a loopback address; set PROMPTSTORE_MODEL_ALLOW_PRIVATE=true to allow private networks",
      );
    } finally {
      await strict.close();
    }
  });

  it("a host name that resolves to loopback is refused at the run, without saying what it resolves to", async () => {
    const strict = await testApp(database);
    try {
      standIn.on("m", { kind: "stream", pieces: ["never"] });
      const connection = await strict.app.connections.create(
        { projectId: strict.project.projectId, operator: true },
        { name: "Local", base_url: standIn.baseUrl.replace("127.0.0.1", "localhost"), api_key: KEY, models: ["m"] },
      );
      const prompt = await toolPrompt(strict);
      const res = await strict.request("POST", `/api/v2/prompts/${prompt.id}/run`, {
        body: { connection: connection.id },
      });
      const events = parseEvents(String(res.body));
      expect(events.at(-1)).toEqual({
        event: "error",
        data: {
          code: "provider_unreachable",
          status: null,
          message:
            "refused: localhost: address not allowed; set PROMPTSTORE_MODEL_ALLOW_PRIVATE=true to allow private networks",
        },
      });
      expect(JSON.stringify(events)).not.toMatch(/127\.0\.0\.1|::1|loopback/);
      expect(standIn.requests).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it("never lets the key into an answer, a log line or a backup, through a whole run", async () => {
    standIn.on("m", { kind: "stream", pieces: ["fine"] });
    const owner = await member(t, "owner");
    const created = await owner.call("POST", base(), { body: { name: "S", base_url: standIn.baseUrl, api_key: KEY } });
    const prompt = await toolPrompt(t);
    const answers: string[] = [JSON.stringify(created.body)];
    const res = await owner.call("POST", `/api/dashboard/projects/${t.project.projectId}/prompts/${prompt.id}/run`, {
      body: { connection: created.body.data.id, model: { name: "m" } },
    });
    expect(res.status).toBe(200);
    const events = parseEvents(String(res.body));
    expect(events.at(-1)?.data.message).toEqual({ role: "assistant", content: "fine" });
    expect(standIn.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    answers.push(String(res.body), JSON.stringify((await owner.call("GET", base())).body));

    const file = join(mkdtempSync(join(tmpdir(), "playground-backup-")), "backup.jsonl");
    await backupStore(t.store, file);
    const backup = readFileSync(file, "utf8");
    expect(backup).toContain('"model_connections"');
    expect(backup).toContain(`enc:v1:${t.app.secrets.keyId}:`);

    expect(logLines.length).toBeGreaterThan(3);
    for (const text of [...answers, ...logLines, backup]) expect(text).not.toContain(KEY);

    // Restored into another store, the connection still runs (the same key opens it).
    const other = await freshStore(database);
    try {
      await restoreStore(other.store, file);
      const open = (secrets: SecretBox) =>
        new ConnectionService(new PlaygroundStore(other.store.db), secrets, { allowPrivate: true }).open(
          t.project.projectId,
          created.body.data.id,
        );
      expect((await open(t.app.secrets)).apiKey).toBe(KEY);
      await expect(open(SecretBox.ephemeral())).rejects.toThrow(
        `connection: the API key of ${created.body.data.id} cannot be opened with this server's secret key; enter it again`,
      );
    } finally {
      await other.close();
    }
  });
});
