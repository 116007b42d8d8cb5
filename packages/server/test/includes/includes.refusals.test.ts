/**
 * What a save with includes refuses (docs/includes.md), each a 400 naming the field, and nothing saved: an
 * unknown prompt, label, version or section, an include of itself, a cycle at any depth, nesting deeper than 5,
 * an expanded text longer than a section may be, and pins that do not fit.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { includesOn } from "./includes-support.js";

describe.each(DATABASES)("refused includes ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MAX_SECTION_CHARS: 60 });
  const x = includesOn(t);
  beforeEach(() => x.unlimited());

  /** A save of `sections` to `id` refused with exactly `error`, and latest where it was. */
  async function refused(id: string, sections: { title: string; content: string }[], error: string, extra = {}) {
    const before = await x.call("GET", `/api/v2/prompts/${id}/versions`);
    const res = await x.call("PUT", `/api/v2/prompts/${id}`, { sections, ...extra });
    expect(res.body).toEqual({ success: false, error });
    expect(res.status).toBe(400);
    const after = await x.call("GET", `/api/v2/prompts/${id}/versions`);
    expect(after.body.data.versions.length).toBe(before.body.data.versions.length);
  }

  it("refuses an unknown prompt, label, version or section, naming the section and the include", async () => {
    const piece = await x.create("piece", [{ title: "P", content: "p" }]);
    await x.create("a", [{ title: "A", content: "a" }]);
    const two = (content: string) => [
      { title: "A", content: "a" },
      { title: "B", content },
    ];
    await refused("a", two("{{> x}}"), 'sections[1].content: include "x": unknown prompt');
    await refused(
      "a",
      two("{{> piece@staging}}"),
      'sections[1].content: include "piece@staging": prompt piece has no version labelled staging',
    );
    await refused(
      "a",
      two("{{> piece@abcdef0}}"),
      'sections[1].content: include "piece@abcdef0": prompt piece has no version abcdef0',
    );
    await refused(
      "a",
      two("{{> piece#Tone}}"),
      `sections[1].content: include "piece#Tone": version ${piece.slice(0, 12)} of piece has no enabled section titled "Tone"`,
    );
    await refused(
      "a",
      two("ok {{> Piece}}"),
      'sections[1].content: include "{{> Piece}}": must be {{> prompt-id}}, optionally with #Section title, and @label, @latest or @<version hash or 7+ character prefix>',
    );
    await refused(
      "a",
      two("{{> piece@Beta}}"),
      'sections[1].content: include "{{> piece@Beta}}": @Beta: must be latest, a label, or 7-64 lowercase hex characters of a version hash',
    );
    const md = await x.call("PUT", "/api/v2/prompts/a", { markdown: "# A\na\n# B\n{{> nope}}" });
    expect(md.body.error).toBe('markdown: sections[1].content: include "nope": unknown prompt');
    const create = await x.call("POST", "/api/v2/prompts", { name: "New", sections: two("{{> x}}") });
    expect(create.body).toEqual({ success: false, error: 'sections[1].content: include "x": unknown prompt' });
  });

  it("refuses an include of itself, on a save and on a create with its id", async () => {
    await x.create("piece", [{ title: "P", content: "p" }]);
    await refused(
      "piece",
      [{ title: "P", content: "{{> piece@latest}}" }],
      'sections[0].content: include "piece@latest": a prompt cannot include itself',
    );
    const create = await x.call("POST", "/api/v2/prompts", {
      id: "self",
      name: "Self",
      sections: [{ title: "S", content: "{{> self}}" }],
    });
    expect(create.body).toEqual({
      success: false,
      error: 'sections[0].content: include "self": a prompt cannot include itself',
    });
  });

  it("refuses a cycle of three, however it is reached", async () => {
    await x.create("a", [{ title: "A", content: "a" }]);
    await x.create("b", [{ title: "B", content: "b{{> a}}" }]);
    const c = await x.create("c", [{ title: "C", content: "c{{> b}}" }]);
    await refused(
      "a",
      [{ title: "A", content: "a{{> c}}" }],
      `sections[0].content: include "c": version ${c.slice(0, 12)} of c includes a itself (through its own includes), which would be a cycle`,
    );
    // Also by a named section, a label or a hash.
    await refused(
      "a",
      [{ title: "A", content: `{{> c#C@${c.slice(0, 7)}}}` }],
      `sections[0].content: include "c#C@${c.slice(0, 7)}": version ${c.slice(0, 12)} of c includes a itself (through its own includes), which would be a cycle`,
    );
  });

  it("takes includes nested 5 deep and refuses a sixth level", async () => {
    await x.create("p5", [{ title: "T", content: "5" }]);
    for (let n = 4; n >= 0; n--) await x.create(`p${n}`, [{ title: "T", content: `${n}{{> p${n + 1}}}` }]);
    expect((await x.read("p0")).prompt).toBe("<T>\n012345\n</T>");
    const p0 = (await x.read("p0")).version as string;
    const res = await x.call("POST", "/api/v2/prompts", {
      id: "deep",
      name: "Deep",
      sections: [{ title: "T", content: "{{> p0}}" }],
    });
    expect(res.body).toEqual({
      success: false,
      error: `sections[0].content: include "p0": version ${p0.slice(0, 12)} of p0 nests includes 5 deep; an include may nest at most 5 deep`,
    });
    expect(res.status).toBe(400);
    // p1 is 4 deep: one more level is the fifth.
    expect(
      (
        await x.call("POST", "/api/v2/prompts", {
          id: "ok",
          name: "Ok",
          sections: [{ title: "T", content: "{{> p1}}" }],
        })
      ).status,
    ).toBe(201);
  });

  it("refuses an expanded section longer than a section may be, and a piece too long to take", async () => {
    await x.create("piece", [{ title: "P", content: "x".repeat(30) }]);
    await x.create("a", [{ title: "A", content: "a" }]);
    await refused(
      "a",
      [{ title: "A", content: "{{> piece}}{{> piece}}{{> piece}}" }],
      "sections[0].content: with its includes expanded, must be at most 60 characters",
    );
    // Two sections of 30 joined by a blank line: 62 characters, more than any section holds.
    await x.create("big", [
      { title: "P", content: "y".repeat(30) },
      { title: "Q", content: "z".repeat(30) },
    ]);
    await refused(
      "a",
      [{ title: "A", content: "{{> big}}" }],
      'sections[0].content: include "big": takes 62 characters; a section holds at most 60',
    );
    // Within the limit, it is taken.
    expect(await x.save("a", [{ title: "A", content: "{{> piece}}{{> piece}}" }])).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses pins that do not fit the includes", async () => {
    const v1 = await x.create("piece", [{ title: "P", content: "one" }]);
    const other = await x.create("other", [{ title: "O", content: "o" }]);
    await x.create("a", [{ title: "A", content: "a" }]);
    const sections = [{ title: "A", content: `{{> piece}} {{> piece@${v1.slice(0, 7)}}}` }];
    await refused("a", sections, "includes.nope: the sections hold no include {{> nope}}", { includes: { nope: v1 } });
    await refused("a", sections, `includes.piece: prompt piece has no version ${other}`, {
      includes: { piece: other },
    });
    const v2 = await x.save("piece", [{ title: "P", content: "two" }]);
    await refused(
      "a",
      sections,
      `includes.piece@${v1.slice(0, 7)}: is not the version ${v1.slice(0, 7)} the include names`,
      {
        includes: { [`piece@${v1.slice(0, 7)}`]: v2 },
      },
    );
    const bad = await x.call("PUT", "/api/v2/prompts/a", { sections, includes: { piece: "abc" } });
    expect(bad.body.error).toBe("includes.piece: must be the full 64-character hash of a version");
  });
});
