/**
 * The stand-in's modes that evaluations rest on, through a real run: `compute` answers from the request alone
 * (so a check's verdict is known exactly), and `times` serves a 429 with Retry-After before the answer.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { run, standInConnection, toolPrompt } from "../support/playground.js";

describe.each(DATABASES)("the stand-in's deterministic and rate-limited modes ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
  });
  afterEach(async () => {
    await standIn.close();
  });

  const shout = (body: Record<string, any>) => ({ content: String(body.messages.at(-1).content).toUpperCase() });

  it("compute: the same request gets the same answer, streamed in pieces", async () => {
    standIn.on("shout", { kind: "compute", answer: shout, pieceChars: 4 });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const body = {
      connection,
      variables: { customer: "Ada" },
      messages: [{ role: "user", content: "where is my parcel" }],
      model: { name: "shout" },
    };
    for (let i = 0; i < 2; i++) {
      const res = await run(t, prompt.id, body);
      expect(res.events.filter((e) => e.event === "delta").map((e) => e.data.content)).toEqual([
        "WHER",
        "E IS",
        " MY ",
        "PARC",
        "EL",
      ]);
      expect(res.events.at(-1)?.data.message).toEqual({ role: "assistant", content: "WHERE IS MY PARCEL" });
    }
  });

  it("times and after: a 429 with Retry-After for the first request, then the answer", async () => {
    standIn.on("busy", {
      kind: "error",
      status: 429,
      retryAfter: 2,
      times: 1,
      after: { kind: "compute", answer: shout },
    });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const body = {
      connection,
      variables: { customer: "Ada" },
      messages: [{ role: "user", content: "hi" }],
      model: { name: "busy" },
    };
    const first = await run(t, prompt.id, body);
    expect(first.events.at(-1)?.data).toMatchObject({ code: "provider_rate_limited", status: 429 });
    const second = await run(t, prompt.id, body);
    expect(second.events.at(-1)?.data.message).toEqual({ role: "assistant", content: "HI" });
    expect(standIn.requests).toHaveLength(2);
  });
});
