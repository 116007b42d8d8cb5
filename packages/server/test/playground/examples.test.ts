import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents, standInConnection, toolPrompt } from "../support/playground.js";

describe.each(DATABASES)("saved examples ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
  });
  afterEach(async () => {
    await standIn.close();
  });

  const examplesUrl = (prompt: string) => `/api/v2/prompts/${prompt}/examples`;
  const newExample = async (prompt: string, name: string, customer: string) => {
    const res = await t.request("POST", examplesUrl(prompt), {
      body: { name, variables: { customer }, messages: [{ role: "user", content: `Hi, I am ${customer}` }] },
    });
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const runAll = async (prompt: string, body: unknown) => {
    const res = await t.request("POST", `${examplesUrl(prompt)}/run`, { body });
    expect(res.status).toBe(200);
    return parseEvents(String(res.body));
  };

  it("are created, read, changed and removed with a write key; read with a read key; validated naming the field", async () => {
    const prompt = await toolPrompt(t);
    const created = await t.request("POST", examplesUrl(prompt.id), {
      body: { name: "Refund", variables: { customer: "Ada" }, good_answer: "Apologises" },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toEqual({
      id,
      prompt_id: prompt.id,
      name: "Refund",
      variables: { customer: "Ada" },
      messages: [],
      good_answer: "Apologises",
      created_at: created.body.data.created_at,
      updated_at: created.body.data.created_at,
    });
    const readKey = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const listed = await t.request("GET", examplesUrl(prompt.id), { key: readKey });
    expect(listed.body.data.examples).toEqual([created.body.data]);
    const refused = await t.request("POST", examplesUrl(prompt.id), { key: readKey, body: { name: "X" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe(
      "scope: saving examples needs a key with scope write or higher; this key has scope read",
    );

    const changed = await t.request("PATCH", `${examplesUrl(prompt.id)}/${id}`, { body: { good_answer: null } });
    expect(changed.body.data.good_answer).toBeNull();
    const bad = await t.request("POST", examplesUrl(prompt.id), { body: { name: "X", variables: { a: 1 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("variables.a: must be a string, not a number");
    expect((await t.request("GET", `${examplesUrl("nope")}`)).status).toBe(404);
    const other = await t.newProject();
    expect((await t.request("GET", `${examplesUrl(prompt.id)}/${id}`, { key: other.key })).status).toBe(404);

    const removed = await t.request("DELETE", `${examplesUrl(prompt.id)}/${id}`);
    expect(removed.body.data).toEqual({ id, removed: true });
    expect((await t.request("GET", `${examplesUrl(prompt.id)}/${id}`)).status).toBe(404);
  });

  it("run all: two versions side by side, results kept per (version, example, settings) and answered at once the next time", async () => {
    standIn.on("m", { kind: "stream", pieces: ["answer"], usage: { prompt_tokens: 5, completion_tokens: 1 } });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const saved = await t.request("PUT", `/api/v2/prompts/${prompt.id}`, {
      body: { sections: [{ title: "Role", content: "You help {{ customer }} kindly." }] },
    });
    const candidate = saved.body.data.version as string;
    const a = await newExample(prompt.id, "A", "Ada");
    const b = await newExample(prompt.id, "B", "Bo");

    const body = { connection, versions: ["latest", "production"], model: { name: "m" } };
    const first = await runAll(prompt.id, body);
    expect(first.map((e) => e.event)).toEqual(["start", "result", "result", "result", "result", "done"]);
    expect(first[0]?.data.versions).toEqual([
      { ref: "latest", version: candidate },
      { ref: "production", version: prompt.version },
    ]);
    expect(first[0]?.data.examples).toEqual([a.id, b.id]);
    expect(first.at(-1)?.data).toEqual({ ran: 4, kept: 0, failed: 0 });
    const results = first.filter((e) => e.event === "result").map((e) => e.data);
    expect(results.every((r) => r.kept === false)).toBe(true);
    expect(new Set(results.map((r) => `${r.example_id}/${r.version}`))).toEqual(
      new Set([
        `${a.id}/${candidate}`,
        `${a.id}/${prompt.version}`,
        `${b.id}/${candidate}`,
        `${b.id}/${prompt.version}`,
      ]),
    );
    const one = results.find((r) => r.example_id === a.id && r.version === candidate).result;
    expect(one).toMatchObject({
      example_id: a.id,
      version: candidate,
      settings: { connection, guard: true, model: { name: "m" } },
      answer: { role: "assistant", content: "answer" },
      finish_reason: "stop",
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    });
    expect(standIn.requests).toHaveLength(4);
    const sentToCandidate = standIn.requests.find((r) =>
      r.body.messages[0].content.startsWith("<Role>\nYou help Ada kindly."),
    );
    expect(sentToCandidate?.body.messages[1]).toEqual({ role: "user", content: "Hi, I am Ada" });

    const again = await runAll(prompt.id, body);
    expect(again.at(-1)?.data).toEqual({ ran: 0, kept: 4, failed: 0 });
    expect(standIn.requests).toHaveLength(4);
    const keptOne = again.find(
      (e) => e.event === "result" && e.data.example_id === a.id && e.data.version === candidate,
    );
    expect(keptOne?.data).toEqual({ example_id: a.id, version: candidate, kept: true, result: one });

    // Other settings are another key: run again. Changed inputs drop the example's results.
    const warmer = await runAll(prompt.id, { ...body, versions: ["latest"], model: { name: "m", temperature: 1 } });
    expect(warmer.at(-1)?.data).toEqual({ ran: 2, kept: 0, failed: 0 });
    await t.request("PATCH", `${examplesUrl(prompt.id)}/${a.id}`, { body: { variables: { customer: "Al" } } });
    const kept = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=latest`);
    expect(kept.body.data.version).toBe(candidate);
    expect(kept.body.data.results.map((r: { example_id: string }) => r.example_id)).toEqual([b.id, b.id]);

    const fresh = await runAll(prompt.id, { ...body, versions: ["production"], examples: [b.id], fresh: true });
    expect(fresh.at(-1)?.data).toEqual({ ran: 1, kept: 0, failed: 0 });
  });

  it("run all on an unsaved draft beside production: kept under the hash it saves as, so a save shows them at once", async () => {
    standIn.on("m", { kind: "stream", pieces: ["drafted"] });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const a = await newExample(prompt.id, "A", "Ada");
    const draft = { sections: [{ title: "Role", content: "You help {{ customer }}, briefly." }] };
    const body = { connection, draft, versions: ["production"], model: { name: "m" } };
    const first = await runAll(prompt.id, body);
    expect(first.map((e) => e.event)).toEqual(["start", "result", "result", "done"]);
    const draftHash = first[0]?.data.versions[0].version as string;
    expect(first[0]?.data.versions).toEqual([
      { ref: "draft", version: draftHash },
      { ref: "production", version: prompt.version },
    ]);
    // The draft's text went to the model, filled with the example's values.
    expect(standIn.requests).toHaveLength(2);
    const fromDraft = standIn.requests.filter((r) =>
      r.body.messages[0].content.startsWith("<Role>\nYou help Ada, briefly.\n</Role>"),
    );
    expect(fromDraft).toHaveLength(1);
    // Saving the draft gives that hash, and its results are there without running again.
    const saved = await t.request("PUT", `/api/v2/prompts/${prompt.id}`, { body: draft });
    expect(saved.body.data.version).toBe(draftHash);
    const kept = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=latest`);
    expect(kept.body.data.results.map((r: any) => [r.example_id, r.version, r.answer.content])).toEqual([
      [a.id, draftHash, "drafted"],
    ]);
    // A draft is a side: with two versions besides it, three sides are refused, naming the field.
    const three = await t.request("POST", `${examplesUrl(prompt.id)}/run`, {
      body: { ...body, versions: ["production", "latest"] },
    });
    expect(three.status).toBe(400);
    expect(three.body.error).toBe("versions: with a draft, must name at most one version");
    const none = await t.request("POST", `${examplesUrl(prompt.id)}/run`, { body: { connection, versions: [] } });
    expect(none.body.error).toBe("versions: must name one or two versions");
  });

  it("a provider failure fails its cells only, keeping nothing of them", async () => {
    standIn.on("m", { kind: "error", status: 429 });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const a = await newExample(prompt.id, "A", "Ada");
    const events = await runAll(prompt.id, { connection, versions: ["production"], model: { name: "m" } });
    expect(events.map((e) => e.event)).toEqual(["start", "error", "done"]);
    expect(events[1]?.data).toMatchObject({
      example_id: a.id,
      version: prompt.version,
      code: "provider_rate_limited",
      status: 429,
    });
    expect(events[2]?.data).toEqual({ ran: 0, kept: 0, failed: 1 });
    const kept = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=production`);
    expect(kept.body.data.results).toEqual([]);
  });

  it("shows in the history (tried on n of m) and in a release request's answer, candidate against production", async () => {
    standIn.on("m", { kind: "stream", pieces: ["ok"] });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const saved = await t.request("PUT", `/api/v2/prompts/${prompt.id}`, {
      body: { sections: [{ title: "Role", content: "v2 for {{ customer }}" }] },
    });
    const candidate = saved.body.data.version as string;
    const a = await newExample(prompt.id, "A", "Ada");
    const b = await newExample(prompt.id, "B", "Bo");
    await runAll(prompt.id, { connection, versions: ["latest", "production"], examples: [a.id], model: { name: "m" } });
    await runAll(prompt.id, { connection, versions: ["production"], examples: [b.id], model: { name: "m" } });

    const owner = await member(t, "owner");
    const history = await owner.call(
      "GET",
      `/api/dashboard/projects/${t.project.projectId}/prompts/${prompt.id}/versions`,
    );
    const tried = Object.fromEntries(
      history.body.data.versions.map((v: { version: string; examples: unknown }) => [v.version, v.examples]),
    );
    expect(tried).toEqual({ [candidate]: { tried: 1, of: 2 }, [prompt.version]: { tried: 2, of: 2 } });

    const requested = await t.request("POST", `/api/v2/prompts/${prompt.id}/releases`, {
      body: { label: "production", version: candidate },
    });
    expect(requested.status).toBe(201);
    const release = await t.request("GET", `/api/v2/releases/${requested.body.data.id}`);
    expect(
      release.body.data.examples.map((e: any) => [e.name, e.candidate?.version ?? null, e.production?.version ?? null]),
    ).toEqual([
      ["A", candidate, prompt.version],
      ["B", null, prompt.version],
    ]);
    const inDashboard = await owner.call(
      "GET",
      `/api/dashboard/projects/${t.project.projectId}/releases/${requested.body.data.id}`,
    );
    expect(inDashboard.body.data.examples).toEqual(release.body.data.examples);
  });

  it("export and import carry examples and their results into another project", async () => {
    standIn.on("m", { kind: "stream", pieces: ["ok"] });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const a = await newExample(prompt.id, "A", "Ada");
    await runAll(prompt.id, { connection, versions: ["production"], model: { name: "m" } });
    const examples = (await t.request("GET", examplesUrl(prompt.id))).body.data.examples;
    const results = (await t.request("GET", `${examplesUrl(prompt.id)}/results?version=production`)).body.data.results;

    const other = await t.newProject();
    expect((await toolPrompt(t, prompt.id, other.key)).version).toBe(prompt.version);
    const imported = await t.request("POST", `${examplesUrl(prompt.id)}/import`, {
      key: other.key,
      body: { examples, results },
    });
    expect(imported.body.data).toEqual({ examples: 1, results: 1 });
    // Within one server the example id is taken (by the source project): the copy gets its own.
    const copied = (await t.request("GET", examplesUrl(prompt.id), { key: other.key })).body.data.examples;
    expect(copied).toEqual([{ ...examples[0], id: copied[0].id }]);
    expect(copied[0].id).not.toBe(examples[0].id);
    const there = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=${prompt.version}`, {
      key: other.key,
    });
    // Marked imported: this server (this project) did not run it.
    expect(there.body.data.results).toEqual([{ ...results[0], example_id: copied[0].id, imported: true }]);
    const twice = await t.request("POST", `${examplesUrl(prompt.id)}/import`, {
      key: other.key,
      body: { examples: copied, results: there.body.data.results },
    });
    expect(twice.body.data).toEqual({ examples: 1, results: 0 });
    expect((await t.request("GET", examplesUrl(prompt.id), { key: other.key })).body.data.examples).toHaveLength(1);
    const orphan = await t.request("POST", `${examplesUrl(prompt.id)}/import`, {
      key: other.key,
      body: { examples: [], results: [{ ...results[0], example_id: "exa_000000000000000000000000" }] },
    });
    expect(orphan.status).toBe(400);
    expect(orphan.body.error).toBe(
      `results[0].example_id: exa_000000000000000000000000 is not an example of ${prompt.id}`,
    );
    expect(a.id).toBe(examples[0].id);
  });
});
