/**
 * Includes read back (docs/includes.md): a save pins each include, and every read serves the text with the
 * includes expanded, exactly, with the written form beside it; the hash covers the pins.
 */
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { beforeEach, describe, expect, it } from "vitest";
import { promptView, successEnvelope } from "../../src/http/openapi/response-schemas.js";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { includesOn, pinnedHash } from "./includes-support.js";

/** The JSON-RPC result of an MCP answer sent as one server-sent event. */
const sseResult = (body: unknown) =>
  JSON.parse(
    String(body)
      .split("\n")
      .find((l) => l.startsWith("data: "))!
      .slice(6),
  ).result;

const SAFETY = [
  { title: "Rules", content: "Never reveal secrets." },
  { title: "Draft", content: "Not served.", enabled: false },
  { title: "Tone", content: "Be kind to {{ user }}." },
];
const SUPPORT = [
  { title: "Role", content: "You help {{ company }}.\n{{> safety}}" },
  { title: "Style", content: "{{> safety#Tone}} Sign as {{ agent }}." },
];
const EXPECTED_TEXT =
  "<Role>\nYou help {{ company }}.\nNever reveal secrets.\n\nBe kind to {{ user }}.\n</Role>\n\n" +
  "<Style>\nBe kind to {{ user }}. Sign as {{ agent }}.\n</Style>";

describe.each(DATABASES)("reads of a prompt with includes ($name)", (database) => {
  const t = useTestApp(database);
  const x = includesOn(t);
  beforeEach(() => x.unlimited());

  it("serves the expanded text, sections with their source, the included variables and the pins, exactly", async () => {
    const piece = await x.create("safety", SAFETY);
    const hash = await x.create("support", SUPPORT);
    expect(hash).toBe(pinnedHash(SUPPORT, { safety: piece, "safety#Tone": piece }));
    const data = await x.read("support");
    expect(data.prompt).toBe(EXPECTED_TEXT);
    expect(data.version).toBe(hash);
    expect(data.variables).toEqual(["company", "user", "agent"]);
    expect(data.sections.map((s: Record<string, unknown>) => ({ ...s, id: undefined }))).toEqual([
      {
        id: undefined,
        title: "Role",
        content: "You help {{ company }}.\nNever reveal secrets.\n\nBe kind to {{ user }}.",
        enabled: true,
        source: SUPPORT[0]?.content,
      },
      {
        id: undefined,
        title: "Style",
        content: "Be kind to {{ user }}. Sign as {{ agent }}.",
        enabled: true,
        source: SUPPORT[1]?.content,
      },
    ]);
    expect(data.includes).toEqual([
      { include: "safety", prompt: "safety", section: null, pointer: "production", version: piece },
      { include: "safety#Tone", prompt: "safety", section: "Tone", pointer: "production", version: piece },
    ]);
    // The document's shape is the one the OpenAPI document describes.
    expect(successEnvelope(promptView).safeParse((await x.call("GET", "/api/v2/prompts/support")).body).success).toBe(
      true,
    );
    // The piece itself reads as any prompt: no includes, no source.
    const own = await x.read("safety");
    expect(own.includes).toBeUndefined();
    expect(own.sections.some((s: Record<string, unknown>) => "source" in s)).toBe(false);
  });

  it("serves the same text on v1, by hash and prefix, guarded, and through MCP prompts/get", async () => {
    await x.create("safety", SAFETY);
    const hash = await x.create("support", SUPPORT);
    const guarded = `${EXPECTED_TEXT}\n\n${DEFAULT_GUARD_TEXT}`;
    expect((await x.read("support", "")).prompt).toBe(guarded);
    expect((await x.read("support", `version=${hash}&guard=false`)).prompt).toBe(EXPECTED_TEXT);
    expect((await x.read("support", `version=${hash.slice(0, 9)}&guard=false`)).prompt).toBe(EXPECTED_TEXT);
    const v1 = await x.call("GET", "/api/v1/prompts/support");
    expect(v1.body.data.prompt).toBe(guarded);
    expect(v1.body.data.variables).toEqual(["company", "user", "agent"]);
    const mcp = await t.request("POST", "/api/v2/mcp", {
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "prompts/get",
        params: { name: "support", arguments: { company: "Acme", user: "Ana", agent: "Bo" } },
      },
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    });
    expect(sseResult(mcp.body).messages[0].content.text).toBe(
      guarded.replace("{{ company }}", "Acme").replaceAll("{{ user }}", "Ana").replace("{{ agent }}", "Bo"),
    );
    const list = await t.request("POST", "/api/v2/mcp", {
      body: { jsonrpc: "2.0", id: 2, method: "prompts/list", params: {} },
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    });
    const support = sseResult(list.body).prompts.find((p: { name: string }) => p.name === "support");
    expect(support.arguments.map((a: { name: string }) => a.name)).toEqual(["company", "user", "agent"]);
  });

  it("nests: an included prompt's own includes are already expanded in what it gives", async () => {
    const base = await x.create("base", [{ title: "B", content: "BASE {{ v }}" }]);
    const middle = await x.create("middle", [{ title: "M", content: "[{{> base}}]" }]);
    expect(middle).toBe(pinnedHash([{ title: "M", content: "[{{> base}}]" }], { base }));
    await x.create("top", [{ title: "T", content: "<{{> middle}}> {{> base@latest}}" }]);
    const data = await x.read("top");
    expect(data.prompt).toBe("<T>\n<[BASE {{ v }}]> BASE {{ v }}\n</T>");
    expect(data.variables).toEqual(["v"]);
  });

  it("pins each pointer: a label, latest, a hash prefix, production before anything is published", async () => {
    const v1 = await x.create("piece", [{ title: "P", content: "one" }], false);
    // Nothing published: production is what a read serves, latest.
    await x.create("a", [{ title: "A", content: "{{> piece}}" }]);
    expect((await x.read("a")).includes[0].version).toBe(v1);
    const v2 = await x.save("piece", [{ title: "P", content: "two" }], { publish: true });
    const v3 = await x.save("piece", [{ title: "P", content: "three" }]);
    const moved = await x.call("POST", "/api/v2/prompts/piece/publish", { version: v1, label: "staging" });
    expect(moved.status).toBe(200);
    const sections = [
      { title: "A", content: `{{> piece}}|{{> piece@latest}}|{{> piece@staging}}|{{>piece@${v2.slice(0, 8)}}}` },
    ];
    const hash = await x.save("a", sections);
    const data = await x.read("a", `version=${hash}&guard=false`);
    expect(data.prompt).toBe("<A>\ntwo|three|one|two\n</A>");
    expect(data.includes.map((i: { pointer: string; version: string }) => [i.pointer, i.version])).toEqual([
      ["production", v2],
      ["latest", v3],
      ["staging", v1],
      [v2.slice(0, 8), v2],
    ]);
    expect(hash).toBe(
      pinnedHash(sections, { piece: v2, "piece@latest": v3, "piece@staging": v1, [`piece@${v2.slice(0, 8)}`]: v2 }),
    );
  });

  it("keeps a pin that is given, and the same content with the same pins is the same version", async () => {
    const v1 = await x.create("piece", [{ title: "P", content: "one" }]);
    const first = await x.create("a", [{ title: "A", content: "{{> piece}}" }]);
    const v2 = await x.save("piece", [{ title: "P", content: "two" }], { publish: true });
    const again = await x.call("PUT", "/api/v2/prompts/a", {
      sections: [{ title: "A", content: "{{> piece}}" }],
      includes: { piece: v1 },
    });
    expect(again.body.data).toEqual({ id: "a", version: first, created: false, published: false });
    // Without the pin, the include takes what production serves now: a new version.
    const moved = await x.save("a", [{ title: "A", content: "{{> piece}}" }]);
    expect(moved).toBe(pinnedHash([{ title: "A", content: "{{> piece}}" }], { piece: v2 }));
    expect((await x.read("a", "version=latest&guard=false")).prompt).toBe("<A>\ntwo\n</A>");
    expect((await x.read("a")).prompt).toBe("<A>\none\n</A>");
  });

  it("serves a Markdown save's includes the same way", async () => {
    const piece = await x.create("piece", [{ title: "P", content: "PIECE" }]);
    const res = await x.call("POST", "/api/v2/prompts", { id: "md", name: "md", markdown: "# Role\nSay {{> piece}}." });
    expect(res.status).toBe(201);
    expect(res.body.data.version).toBe(pinnedHash([{ title: "Role", content: "Say {{> piece}}." }], { piece }));
    expect((await x.read("md")).prompt).toBe("<Role>\nSay PIECE.\n</Role>");
  });
});
