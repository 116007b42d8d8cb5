import { contentHash } from "@promptstore/core/prompts/hash";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";
import { type Received, type Receiver, startReceiver, verify } from "./receiver.js";

/**
 * Webhooks on a 250 KB prompt: a delivery carries the event, never the prompt's text (docs/webhooks.md), so
 * a save of the big prompt sends the same few hundred bytes as a save of a 90-byte one.
 */
const MARKDOWN = bigPromptMarkdown();
const EDITED = editedBigPrompt(MARKDOWN);
const SMALL = "# Role\nYou help {{ customer_name }} of {{ company }}.\n\n# Rules\nBe brief.\n\n- One.\n- Two.\n";
const SMALL_EDITED = SMALL.replace("Be brief.", "Be kind.");
const hash = (markdown: string) => contentHash({ sections: markdownToSections(markdown), tools: [] });

const FAST = {
  PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
  PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
  PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 1000,
};

describe.each(DATABASES)("webhooks on a 250 KB prompt ($name)", (database: TestDatabase) => {
  const t = useTestApp(database, FAST);
  let hook: Receiver | undefined;
  beforeEach(() => t.app.tenants.setPlan(t.project.orgId, "unlimited"));
  afterEach(async () => {
    await hook?.close();
    hook = undefined;
  });

  it("a save of the big prompt delivers the event alone: the exact bytes, as many as a small prompt's save", async () => {
    const receiver = await startReceiver();
    hook = receiver;
    const created = await t.request("POST", "/api/v2/webhooks", {
      body: { url: receiver.url, events: ["prompt.version_saved"] },
    });
    expect(created.status).toBe(201);
    const { secret } = created.body.data;

    // Two prompts whose ids have the same length: the 250 KB one and a 90-byte one, each created and then
    // saved with one paragraph changed.
    const saves: { id: string; version: string }[] = [];
    for (const [id, markdown, edited] of [
      ["agent", MARKDOWN, EDITED],
      ["small", SMALL, SMALL_EDITED],
    ] as const) {
      expect((await t.request("POST", "/api/v2/prompts", { body: { id, name: id, markdown } })).status).toBe(201);
      const saved = await t.request("PUT", `/api/v2/prompts/${id}`, { body: { markdown: edited } });
      expect(saved.body.data).toEqual({ id, version: hash(edited), created: true, published: false });
      saves.push({ id, version: saved.body.data.version });
    }
    await receiver.waitFor((requests) => requests.length === 2);

    const bodies: string[] = [];
    for (const [i, { id, version }] of saves.entries()) {
      const request = receiver.requests[i] as Received;
      const eventId = Number(String(request.headers["webhook-id"]).replace("msg_", ""));
      const versions = (await t.request("GET", `/api/v2/prompts/${id}/versions`)).body.data.versions;
      expect(versions.map((v: { version: string }) => v.version)).toEqual([version, expect.any(String)]);
      const at: string = versions[0].created_at;
      const event = {
        type: "prompt.version_saved",
        timestamp: at,
        data: {
          project_id: t.project.projectId,
          id: eventId,
          type: "prompt.version_saved",
          prompt_id: id,
          version,
          production_version: null,
          latest_version: version,
          at,
        },
      };
      // Signed as any delivery, and the body is exactly the event: none of the prompt's text.
      expect(verify(secret, request)).toEqual(event);
      expect(request.body).toBe(JSON.stringify(event));
      bodies.push(request.body);
    }
    const [big, small] = bodies as [string, string];
    const digits = (body: string) => String(JSON.parse(body).data.id).length;
    // The big prompt's payload: 365 bytes besides its project id, event id and prompt id (two timestamps of
    // 24 characters, two hashes of 64, the type twice), whatever the prompt's size: the small one's to the byte.
    expect(Buffer.byteLength(big)).toBe(365 + t.project.projectId.length + digits(big) + "agent".length);
    expect(Buffer.byteLength(big) - digits(big)).toBe(Buffer.byteLength(small) - digits(small));
    expect(Buffer.byteLength(MARKDOWN)).toBeGreaterThan(245_000);
  });
});
