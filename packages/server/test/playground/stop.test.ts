import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { standInConnection, toolPrompt } from "../support/playground.js";

describe.each(DATABASES)("a stopped run ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("frees its connection to the provider at once, and streams pieces as they leave the provider", async () => {
    // 40 pieces 100 ms apart: left alone, the provider's answer would hold its connection for 4 s.
    standIn.on("slow", { kind: "stream", pieces: Array.from({ length: 40 }, (_, i) => `p${i} `), delayMs: 100 });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    const abort = new AbortController();
    const res = await fetch(`${url}/api/v2/prompts/${prompt.id}/run`, {
      method: "POST",
      headers: { "x-api-key": t.key, "content-type": "application/json" },
      body: JSON.stringify({ connection, model: { name: "slow" } }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    // Each piece reaches the client while the provider is still sending: not buffered to the end.
    while ((text.match(/event: delta/g) ?? []).length < 3) {
      const { value } = await reader.read();
      text += decoder.decode(value, { stream: true });
    }
    expect(standIn.openConnections()).toBe(1);
    expect(text).toContain('event: delta\ndata: {"content":"p0 "}\n\n');
    expect(text).not.toContain("event: done");

    abort.abort();
    const stoppedAt = Date.now();
    await standIn.waitForNoConnections(1000);
    expect(Date.now() - stoppedAt).toBeLessThan(1000);
    expect(standIn.requests).toHaveLength(1);

    const metrics = await t.request("GET", "/metrics", { key: null });
    expect(metrics.body).toContain('promptstore_runs_total{outcome="stopped"} 1');
  });
});
