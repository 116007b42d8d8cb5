/**
 * docs/playground.md, "Model connections": a stored provider key belongs to the address it was entered for.
 * Moving a connection's base URL to another origin needs the key again (or an explicit "" for none): an
 * owner cannot send the key another owner entered to a host of their choosing. Within the origin, or for a
 * connection without a key, the base URL changes as before.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { run, toolPrompt } from "../support/playground.js";

const KEY = "sk-live-entered-by-the-first-owner-41c9";
const OTHER_KEY = "sk-live-the-second-host-key-77d0";

describe.each(DATABASES)("a connection's key stays with its origin ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let provider: StandIn;
  let elsewhere: StandIn;
  let owner: Browser;
  let base = "";
  beforeEach(async () => {
    provider = await startStandIn(KEY);
    elsewhere = await startStandIn(OTHER_KEY);
    provider.on("m", { kind: "stream", pieces: ["from the provider"] });
    elsewhere.on("m", { kind: "stream", pieces: ["from elsewhere"] });
    owner = await member(t, "owner");
    base = `/api/dashboard/projects/${t.project.projectId}/connections`;
  });
  afterEach(async () => {
    await provider.close();
    await elsewhere.close();
  });

  const sealedKey = async (id: string) =>
    (await t.store.db.selectFrom("model_connections").selectAll().where("id", "=", id).executeTakeFirstOrThrow())
      .api_key;
  const create = async (apiKey?: string) => {
    const res = await owner.call("POST", base, {
      body: { name: "Provider", base_url: provider.baseUrl, models: ["m"], ...(apiKey ? { api_key: apiKey } : {}) },
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const answerOf = async (connection: string) => {
    const prompt = await toolPrompt(t, `p-${Math.random().toString(16).slice(2, 8)}`);
    const ran = await run(t, prompt.id, { connection, model: { name: "m" }, variables: { customer: "Ada" } });
    return ran.events.at(-1);
  };

  it("moving the base URL to another origin without the key is a 400 naming api_key, and changes nothing", async () => {
    const id = await create(KEY);
    const sealed = await sealedKey(id);
    const from = new URL(provider.baseUrl).origin;
    const to = new URL(elsewhere.baseUrl).origin;
    const moved = await owner.call("PATCH", `${base}/${id}`, { body: { base_url: elsewhere.baseUrl, name: "Moved" } });
    expect([moved.status, moved.body.error]).toEqual([
      400,
      `api_key: the base URL moves to another origin (${from} → ${to}); the stored key stays with the old one: ` +
        `send the key for the new address, or "" to keep none`,
    ]);
    expect(await sealedKey(id)).toBe(sealed);
    const listed = (await owner.call("GET", base)).body.data.connections;
    expect(listed).toMatchObject([{ id, name: "Provider", base_url: provider.baseUrl, has_key: true }]);
    // Another scheme or port of the same host is another origin too.
    const otherScheme = provider.baseUrl.replace("http://", "https://");
    expect((await owner.call("PATCH", `${base}/${id}`, { body: { base_url: otherScheme } })).status).toBe(400);
    // Runs still go where the key was entered for, and the other host never saw it.
    expect((await answerOf(id))?.data.message).toEqual({ role: "assistant", content: "from the provider" });
    expect(elsewhere.requests).toHaveLength(0);
    expect(provider.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`]);
  });

  it("within the origin the key stays; with a new key, or an explicit none, the base URL moves", async () => {
    const id = await create(KEY);
    const samePath = `${new URL(provider.baseUrl).origin}/v1/`;
    const within = await owner.call("PATCH", `${base}/${id}`, { body: { base_url: samePath } });
    expect(within.body.data).toMatchObject({ base_url: samePath, has_key: true });
    await owner.call("PATCH", `${base}/${id}`, { body: { base_url: provider.baseUrl } });

    const withKey = await owner.call("PATCH", `${base}/${id}`, {
      body: { base_url: elsewhere.baseUrl, api_key: OTHER_KEY },
    });
    expect(withKey.body.data).toMatchObject({ base_url: elsewhere.baseUrl, has_key: true });
    expect((await answerOf(id))?.data.message).toEqual({ role: "assistant", content: "from elsewhere" });
    expect(elsewhere.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${OTHER_KEY}`]);

    const cleared = await owner.call("PATCH", `${base}/${id}`, { body: { base_url: provider.baseUrl, api_key: "" } });
    expect(cleared.body.data).toMatchObject({ base_url: provider.baseUrl, has_key: false });
    expect(await sealedKey(id)).toBeNull();
  });

  it("a connection without a key moves freely; the operator is held to the same rule", async () => {
    const keyless = await create();
    const moved = await owner.call("PATCH", `${base}/${keyless}`, { body: { base_url: elsewhere.baseUrl } });
    expect(moved.body.data).toMatchObject({ base_url: elsewhere.baseUrl, has_key: false });

    const id = await create(KEY);
    const operator = { projectId: t.project.projectId, operator: true as const };
    await expect(t.app.connections.update(operator, id, { base_url: elsewhere.baseUrl })).rejects.toThrow(
      /^api_key: the base URL moves to another origin/,
    );
    expect((await t.app.connections.update(operator, id, { base_url: elsewhere.baseUrl, api_key: "" })).has_key).toBe(
      false,
    );
  });
});
