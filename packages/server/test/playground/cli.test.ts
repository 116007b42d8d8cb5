import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { cli, cliJson, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

const KEY = "sk-cli-provider-key-0c4e1d2b";

describe.each(DATABASES)("promptstore connection commands ($name)", (database) => {
  const db = useBinaryDatabase(database);
  const json = (...args: string[]) => cliJson(db.url, args);

  it("adds with the key from the environment (sealed), lists without it, removes", { timeout: 90_000 }, async () => {
    await json("org", "create", "acme");
    await json("project", "create", "acme", "Web app");
    const added = await cli(
      db.url,
      [
        "connection",
        "add",
        "Web app",
        "--name",
        "OpenAI",
        "--base-url",
        "https://api.openai.com/v1",
        "--api-key-env",
        "MY_KEY",
        "--model",
        "gpt-4o-mini",
        "--model",
        "gpt-4o",
        "--json",
      ],
      { MY_KEY: KEY },
    );
    expect(added.code).toBe(0);
    const created = JSON.parse(added.stdout);
    expect(created).toEqual({
      id: expect.stringMatching(/^con_[0-9a-f]{24}$/),
      name: "OpenAI",
      base_url: "https://api.openai.com/v1",
      models: ["gpt-4o-mini", "gpt-4o"],
      has_key: true,
      created_at: expect.any(String),
      updated_at: created.created_at,
    });
    const listed = await cli(db.url, ["connection", "list", "Web app"]);
    expect(listed.stdout).toBe(
      `${created.id}  OpenAI  https://api.openai.com/v1  key set  models: gpt-4o-mini,gpt-4o\n`,
    );
    for (const out of [added.stdout, added.stderr, listed.stdout, listed.stderr]) expect(out).not.toContain(KEY);

    const store = await openStore(db.url);
    try {
      const row = await store.db.selectFrom("model_connections").selectAll().executeTakeFirstOrThrow();
      expect(row.api_key?.startsWith("enc:v1:")).toBe(true);
      expect(row.api_key).not.toContain(KEY);
    } finally {
      await store.close();
    }

    const missing = await cli(db.url, [
      "connection",
      "add",
      "Web app",
      "--name",
      "X",
      "--base-url",
      "https://x.example/v1",
      "--api-key-env",
      "NOT_SET_ANYWHERE",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("api_key: the environment variable NOT_SET_ANYWHERE is not set");
    const local = await cli(db.url, [
      "connection",
      "add",
      "Web app",
      "--name",
      "Ollama",
      "--base-url",
      "http://127.0.0.1:11434/v1",
    ]);
    expect(local.code).toBe(1);
    expect(local.stderr).toContain(
      "base_url: refused: 127.0.0.1, a loopback address; set PROMPTSTORE_MODEL_ALLOW_PRIVATE=true to allow private networks",
    );
    const allowed = await cli(
      db.url,
      ["connection", "add", "Web app", "--name", "Ollama", "--base-url", "http://127.0.0.1:11434/v1", "--json"],
      {
        PROMPTSTORE_MODEL_ALLOW_PRIVATE: "true",
      },
    );
    expect(JSON.parse(allowed.stdout).has_key).toBe(false);

    expect(await json("connection", "remove", created.id)).toEqual({ id: created.id, removed: true });
    const gone = await cli(db.url, ["connection", "remove", created.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`connection ${created.id} not found`);
  });
});
