/**
 * docs/playground.md, "Model connections": with PROMPTSTORE_MODEL_ALLOW_PRIVATE unset, a base URL that is a
 * host name cannot be judged when it is written (it may resolve elsewhere by the time of a call), so it is
 * accepted; what it resolves to is checked at each call. A host name that resolves to a loopback address
 * (`localhost`) is refused there: the provider (the stand-in, on 127.0.0.1) receives nothing, and the run
 * (or Run all's cell) fails with `provider_unreachable`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { parseEvents, run, toolPrompt } from "../support/playground.js";

describe.each(DATABASES)("a host name that resolves to a private address ($name)", (database) => {
  // PROMPTSTORE_MODEL_ALLOW_PRIVATE unset: the default, private addresses refused.
  const t = useTestApp(database);
  let standIn: StandIn;
  let connection = "";
  beforeEach(async () => {
    standIn = await startStandIn();
    standIn.on("m", { kind: "stream", pieces: ["should never be asked"] });
    const port = new URL(standIn.url).port;
    const owner = await member(t, "owner");
    const created = await owner.call("POST", `/api/dashboard/projects/${t.project.projectId}/connections`, {
      body: { name: "Local", base_url: `http://localhost:${port}/v1`, api_key: standIn.apiKey, models: ["m"] },
    });
    // Accepted when written: a host name is judged by what it resolves to at each call.
    expect(created.status).toBe(201);
    expect(created.body.data.base_url).toBe(`http://localhost:${port}/v1`);
    connection = created.body.data.id;
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("a run is refused at call time: the provider gets no request", async () => {
    const prompt = await toolPrompt(t);
    const res = await run(t, prompt.id, { connection, model: { name: "m" }, variables: { customer: "Ada" } });
    expect(res.status).toBe(200);
    expect(res.events.map((e) => e.event)).toEqual(["start", "error"]);
    const error = res.events.at(-1)?.data;
    expect(error.code).toBe("provider_unreachable");
    expect(error.message).toContain("PROMPTSTORE_MODEL_ALLOW_PRIVATE=true");
    expect(error.message).not.toContain("should never be asked");
    expect(standIn.requests).toHaveLength(0);
  });

  it("Run all fails the cell the same way, and keeps nothing", async () => {
    const prompt = await toolPrompt(t);
    const example = await t.request("POST", `/api/v2/prompts/${prompt.id}/examples`, {
      body: { name: "A", variables: { customer: "Ada" } },
    });
    const res = await t.request("POST", `/api/v2/prompts/${prompt.id}/examples/run`, {
      body: { connection, versions: ["production"], model: { name: "m" } },
    });
    const events = parseEvents(String(res.body));
    expect(events.map((e) => e.event)).toEqual(["start", "error", "done"]);
    expect(events[1]?.data).toMatchObject({
      example_id: example.body.data.id,
      version: prompt.version,
      code: "provider_unreachable",
    });
    expect(events[2]?.data).toEqual({ ran: 0, kept: 0, failed: 1 });
    expect(standIn.requests).toHaveLength(0);
    const kept = await t.request("GET", `/api/v2/prompts/${prompt.id}/examples/results?version=production`);
    expect(kept.body.data.results).toEqual([]);
  });
});
