/**
 * The used-by graph (docs/includes.md): what a version includes and where its pins stand, what includes a
 * prompt and what serves it, over REST and MCP; deleting a prompt that a served version pins is refused,
 * naming them, and the graph after deletes.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { includesOn } from "./includes-support.js";

const short = (hash: string) => hash.slice(0, 12);

describe.each(DATABASES)("includes and included-by ($name)", (database) => {
  const t = useTestApp(database);
  const x = includesOn(t);
  beforeEach(() => x.unlimited());

  it("shows a version's includes with their pins, and which are behind their pointers", async () => {
    const v1 = await x.create("safety", [
      { title: "Rules", content: "r1" },
      { title: "Tone", content: "t1" },
    ]);
    expect((await x.call("POST", "/api/v2/prompts/safety/publish", { version: v1, label: "staging" })).status).toBe(
      200,
    );
    const support = await x.create("support", [
      { title: "S", content: `{{> safety}} {{> safety#Tone@staging}} {{> safety@${v1.slice(0, 7)}}}` },
    ]);
    const v2 = await x.save(
      "safety",
      [
        { title: "Rules", content: "r2" },
        { title: "Tone", content: "t2" },
      ],
      { publish: true },
    );
    const res = await x.call("GET", "/api/v2/prompts/support/includes");
    expect(res.body).toEqual({
      success: true,
      data: {
        id: "support",
        version: support,
        includes: [
          {
            include: "safety",
            prompt: "safety",
            section: null,
            pointer: "production",
            version: v1,
            current: v2,
            outdated: true,
          },
          {
            include: "safety#Tone@staging",
            prompt: "safety",
            section: "Tone",
            pointer: "staging",
            version: v1,
            current: v1,
            outdated: false,
          },
          {
            include: `safety@${v1.slice(0, 7)}`,
            prompt: "safety",
            section: null,
            pointer: v1.slice(0, 7),
            version: v1,
            current: v1,
            outdated: false,
          },
        ],
      },
    });
    // The piece's own read is unchanged by its publish: the dependent serves what it pinned.
    expect((await x.read("support")).prompt).toBe("<S>\nr1\n\nt1 t1 r1\n\nt1\n</S>");
    // A version without includes lists none; an unknown version is the read's 404.
    expect((await x.call("GET", "/api/v2/prompts/safety/includes")).body.data).toEqual({
      id: "safety",
      version: v2,
      includes: [],
    });
    expect((await x.call("GET", "/api/v2/prompts/support/includes?version=abcdef0")).status).toBe(404);
    expect((await x.call("GET", "/api/v2/prompts/support/includes?version=NOPE")).body.error).toMatch(/^version: /);
  });

  it("lists what includes a prompt, with the labels that serve each version, over REST and MCP", async () => {
    const v1 = await x.create("safety", [{ title: "R", content: "r1" }]);
    const s1 = await x.create("support", [{ title: "S", content: "{{> safety}}" }]);
    const f1 = await x.create("faq", [{ title: "F", content: "{{> safety@latest}} and {{> safety}}" }], false);
    const v2 = await x.save("safety", [{ title: "R", content: "r2" }], { publish: true });
    const s2 = await x.save("support", [{ title: "S", content: "new {{> safety}}" }]);
    const res = await x.call("GET", "/api/v2/prompts/safety/included-by");
    const at = (r: { saved_at: string }) => r.saved_at;
    const rows = res.body.data.included_by;
    expect(res.body.data.truncated).toBe(false);
    expect(rows.map((r: Record<string, unknown>) => ({ ...r, saved_at: undefined }))).toEqual([
      {
        prompt: "faq",
        version: f1,
        labels: ["latest"],
        include: "safety@latest",
        pointer: "latest",
        pinned: v1,
        current: v2,
        outdated: true,
        saved_at: undefined,
      },
      {
        prompt: "faq",
        version: f1,
        labels: ["latest"],
        include: "safety",
        pointer: "production",
        pinned: v1,
        current: v2,
        outdated: true,
        saved_at: undefined,
      },
      {
        prompt: "support",
        version: s2,
        labels: ["latest"],
        include: "safety",
        pointer: "production",
        pinned: v2,
        current: v2,
        outdated: false,
        saved_at: undefined,
      },
      {
        prompt: "support",
        version: s1,
        labels: ["production"],
        include: "safety",
        pointer: "production",
        pinned: v1,
        current: v2,
        outdated: true,
        saved_at: undefined,
      },
    ]);
    expect(rows.every((r: { saved_at: string }) => /^\d{4}-\d\d-\d\dT/.test(at(r)))).toBe(true);
    const mcp = await x.call(
      "POST",
      "/api/v2/mcp",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "list_included_by", arguments: { id: "safety" } },
      },
      undefined,
      { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    );
    expect(mcpData(mcp.body)).toEqual(res.body.data);
    const includes = await x.call(
      "POST",
      "/api/v2/mcp",
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_includes", arguments: { id: "support", version: "latest" } },
      },
      undefined,
      { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    );
    expect(mcpData(includes.body)).toEqual(
      (await x.call("GET", "/api/v2/prompts/support/includes?version=latest")).body.data,
    );
    expect((await x.call("GET", "/api/v2/prompts/nope/included-by")).status).toBe(404);
  });

  it("refuses to delete a prompt a served version pins, naming them, until none does; the graph after deletes", async () => {
    await x.create("safety", [{ title: "R", content: "r1" }]);
    const s1 = await x.create("support", [{ title: "S", content: "{{> safety}}" }]);
    const f1 = await x.create("faq", [{ title: "F", content: "{{> safety}}" }]);
    await x.call("POST", "/api/v2/prompts/faq/publish", { version: f1, label: "staging" });
    const refusal = (named: string) =>
      `prompt: safety is included by versions that labels serve: ${named}; save those prompts without the include (or delete them) first: GET /api/v2/prompts/safety/included-by`;
    let res = await x.call("DELETE", "/api/v2/prompts/safety");
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      error: refusal(`faq ${short(f1)} (production, latest, staging), support ${short(s1)} (production, latest)`),
    });
    // Still readable and whole.
    expect((await x.read("safety")).prompt).toBe("<R>\nr1\n</R>");
    // A new latest without the include: production still serves the pinning version.
    const s2 = await x.save("support", [{ title: "S", content: "no include" }]);
    await x.call("DELETE", "/api/v2/prompts/faq");
    res = await x.call("DELETE", "/api/v2/prompts/safety");
    expect(res.body.error).toBe(refusal(`support ${short(s1)} (production)`));
    expect((await x.call("POST", "/api/v2/prompts/support/publish", { version: s2 })).status).toBe(200);
    res = await x.call("DELETE", "/api/v2/prompts/safety");
    expect(res.body).toEqual({ success: true, data: { id: "safety", deleted: true } });
    // The old version of support still reads its expansion, by hash: what a hash serves never changes.
    expect((await x.read("support", `version=${s1}&guard=false`)).prompt).toBe("<S>\nr1\n</S>");
    expect((await x.call("GET", `/api/v2/prompts/support/includes?version=${s1}`)).body.data.includes).toEqual([
      {
        include: "safety",
        prompt: "safety",
        section: null,
        pointer: "production",
        version: expect.any(String),
        current: null,
        outdated: false,
      },
    ]);
    // A prompt made again with the id starts with no dependents: the old pins name versions it does not hold.
    await x.create("safety", [{ title: "R", content: "fresh" }]);
    expect((await x.call("GET", "/api/v2/prompts/safety/included-by")).body.data).toEqual({
      id: "safety",
      included_by: [],
      truncated: false,
    });
    // Deleting a dependent takes its pins with it.
    const other = await x.create("other", [{ title: "O", content: "{{> safety}}" }]);
    expect(
      (await x.call("GET", "/api/v2/prompts/safety/included-by")).body.data.included_by.map(
        (r: { version: string }) => r.version,
      ),
    ).toEqual([other]);
    expect((await x.call("DELETE", "/api/v2/prompts/other")).status).toBe(200);
    expect((await x.call("GET", "/api/v2/prompts/safety/included-by")).body.data.included_by).toEqual([]);
    expect((await x.call("DELETE", "/api/v2/prompts/safety")).status).toBe(200);
  });
});

/** The structured result of an MCP tool call answered as one server-sent event. */
function mcpData(body: unknown) {
  const line = String(body)
    .split("\n")
    .find((l) => l.startsWith("data: "));
  const message = JSON.parse((line as string).slice(6));
  expect(message.result.isError, JSON.stringify(message)).toBeUndefined();
  return message.result.structuredContent;
}
