/**
 * A 250 KB system prompt through the TS client against the real server: created from Markdown, read back
 * byte for byte under the hash the client computes offline, and, in watch mode, a save of a new version
 * reaches the client through the event stream's read (include=read) and is served from memory.
 */
import { contentHash } from "@promptstore/core/prompts/hash";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
import { describe, expect, test } from "vitest";
import { countingFetch, DATABASES, useFixture, waitFor } from "./support/harness.js";

const MARKDOWN = bigPromptMarkdown();
const SECTIONS = markdownToSections(MARKDOWN);
const EDITED_SECTIONS = markdownToSections(editedBigPrompt(MARKDOWN));
const strip = (sections: { title: string; content: string; enabled: boolean }[]) =>
  sections.map(({ title, content, enabled }) => ({ title, content, enabled }));

describe.each(DATABASES)("a 250 KB prompt through the TS client ($name)", (database) => {
  const fx = useFixture(database);

  test("create, read, an unchanged save, and a new version served from the event stream", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const created = await writer.create({ id: "agent", name: "Agent", markdown: MARKDOWN, publish: true });
    expect(created.version).toBe(contentHash({ sections: SECTIONS, tools: [] }));
    const same = await writer.save("agent", { sections: SECTIONS });
    expect(same).toMatchObject({ created: false, version: created.version });

    const counter = countingFetch();
    const reader = fx.client({ baseUrl: server.url, fetch: counter.fetch });
    const first = await reader.get("agent");
    expect(first.version).toBe(created.version);
    expect(strip(first.sections)).toEqual(SECTIONS);
    await waitFor(() => reader.status.stream === "live" && reader.status.reading === 0, 20_000, "the stream");

    const requests = counter.calls.length;
    const saved = await writer.save("agent", { sections: EDITED_SECTIONS, publish: true });
    await waitFor(async () => (await reader.get("agent")).version === saved.version, 20_000, "the new version");
    const second = await reader.get("agent");
    expect(strip(second.sections)).toEqual(EDITED_SECTIONS);
    // Served from the event's read: no request beyond the stream already open.
    expect(counter.calls.length).toBe(requests);
  }, 120_000);
});
