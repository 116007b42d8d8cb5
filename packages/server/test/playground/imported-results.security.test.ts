/**
 * docs/playground.md, "Imported results": a write key can import a result claiming any version, settings
 * hash, answer and time. Such a result says `imported: true` everywhere it is shown (the results read, a
 * release's answers on REST and in the dashboard), whatever the file claimed; it never counts as kept for a
 * run (Run all calls the model and replaces it), never counts as tried, and never hides a result run here.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents, standInConnection, toolPrompt } from "../support/playground.js";

describe.each(DATABASES)("imported example results ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
  });
  afterEach(async () => {
    await standIn.close();
  });

  const examplesUrl = (prompt: string) => `/api/v2/prompts/${prompt}/examples`;
  const runAll = async (prompt: string, body: unknown) => {
    const res = await t.request("POST", `${examplesUrl(prompt)}/run`, { body });
    expect(res.status).toBe(200);
    return parseEvents(String(res.body));
  };

  it("a forged result is marked imported everywhere, is not tried, and Run all calls the model instead", async () => {
    standIn.on("m", { kind: "stream", pieces: ["real answer"] });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const candidate = (
      await t.request("PUT", `/api/v2/prompts/${prompt.id}`, {
        body: { sections: [{ title: "Role", content: "Be curt with {{ customer }}." }] },
      })
    ).body.data.version as string;
    const example = (
      await t.request("POST", examplesUrl(prompt.id), {
        body: { name: "A", variables: { customer: "Ada" }, messages: [{ role: "user", content: "Hi" }] },
      })
    ).body.data;
    const body = { connection, versions: ["production"], model: { name: "m" } };
    const ran = (await runAll(prompt.id, body)).find((e) => e.event === "result")?.data.result;
    expect(ran).toMatchObject({ version: prompt.version, imported: false, answer: { content: "real answer" } });
    expect(standIn.requests).toHaveLength(1);

    // The forgery: the candidate's "answer" under the very settings hash Run all will look for, claiming to
    // have been run here, and a production answer dated in the future under other settings.
    const forged = {
      ...ran,
      version: candidate,
      answer: { role: "assistant", content: "forged: approve me" },
      imported: false,
    };
    const newerElsewhere = {
      ...ran,
      settings_hash: "e".repeat(64),
      answer: { role: "assistant", content: "forged production" },
      ran_at: "2099-01-01T00:00:00.000Z",
    };
    const imported = await t.request("POST", `${examplesUrl(prompt.id)}/import`, {
      body: { examples: [], results: [forged, newerElsewhere] },
    });
    expect(imported.body.data).toEqual({ examples: 0, results: 2 });

    const shown = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=latest`);
    expect(shown.body.data.results).toEqual([{ ...forged, imported: true }]);
    const production = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=production`);
    expect(production.body.data.results.map((r: { imported: boolean }) => r.imported)).toEqual([true, false]);

    // An approver sees the candidate's answer as imported, and production's own run, not the later forgery.
    const owner = await member(t, "owner");
    const asked = await t.request("POST", `/api/v2/prompts/${prompt.id}/releases`, {
      body: { label: "production", version: candidate },
    });
    const release = await t.request("GET", `/api/v2/releases/${asked.body.data.id}`);
    expect(release.body.data.examples).toEqual([
      { example_id: example.id, name: "A", candidate: { ...forged, imported: true }, production: ran },
    ]);
    const inDashboard = await owner.call(
      "GET",
      `/api/dashboard/projects/${t.project.projectId}/releases/${asked.body.data.id}`,
    );
    expect(inDashboard.body.data.examples).toEqual(release.body.data.examples);
    const history = await owner.call(
      "GET",
      `/api/dashboard/projects/${t.project.projectId}/prompts/${prompt.id}/versions`,
    );
    expect(
      Object.fromEntries(
        history.body.data.versions.map((v: { version: string; examples: unknown }) => [v.version, v.examples]),
      ),
    ).toEqual({ [candidate]: { tried: 0, of: 1 }, [prompt.version]: { tried: 1, of: 1 } });

    // Run all does not take the forgery as kept: it calls the model, and its answer replaces the forgery.
    const again = await runAll(prompt.id, { ...body, versions: ["latest"] });
    expect(again.at(-1)?.data).toEqual({ ran: 1, kept: 0, failed: 0 });
    expect(standIn.requests).toHaveLength(2);
    const fresh = again.find((e) => e.event === "result")?.data;
    expect(fresh).toMatchObject({
      kept: false,
      result: { version: candidate, imported: false, answer: { content: "real answer" } },
    });
    const replaced = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=latest`);
    expect(replaced.body.data.results).toEqual([fresh.result]);
    // Now run here, it is kept: the next Run all answers it at once.
    expect((await runAll(prompt.id, { ...body, versions: ["latest"] })).at(-1)?.data).toEqual({
      ran: 0,
      kept: 1,
      failed: 0,
    });
    expect(standIn.requests).toHaveLength(2);
  });

  it("an import never replaces a result run here", async () => {
    standIn.on("m", { kind: "stream", pieces: ["real answer"] });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    await t.request("POST", examplesUrl(prompt.id), { body: { name: "A", variables: { customer: "Ada" } } });
    const ran = (await runAll(prompt.id, { connection, versions: ["production"], model: { name: "m" } })).find(
      (e) => e.event === "result",
    )?.data.result;
    const imported = await t.request("POST", `${examplesUrl(prompt.id)}/import`, {
      body: { examples: [], results: [{ ...ran, answer: { role: "assistant", content: "forged" } }] },
    });
    expect(imported.body.data).toEqual({ examples: 0, results: 0 });
    const shown = await t.request("GET", `${examplesUrl(prompt.id)}/results?version=production`);
    expect(shown.body.data.results).toEqual([ran]);
  });
});
