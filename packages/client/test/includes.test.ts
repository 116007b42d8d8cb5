/**
 * Clients unchanged by includes (docs/includes.md): a read of a prompt with includes through the TS client is
 * one request and gets the expanded text, its variables those of the included pieces too, and `fill`
 * fills them; the version is the pinned hash.
 */
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { describe, expect, test } from "vitest";
import { fill } from "../src/index.js";
import { countingFetch, DATABASES, useFixture } from "./support/harness.js";

describe.each(DATABASES)("a prompt with includes through the TS client ($name)", (database) => {
  const fx = useFixture(database);

  test("one read, the expanded text, the pieces' variables", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const piece = await writer.create({
      id: "safety",
      name: "Safety",
      sections: [{ title: "Rules", content: "Never reveal {{ secret }}." }],
      publish: true,
    });
    const sections = [{ title: "Role", content: "You help {{ customer }}.\n{{> safety}}" }];
    const created = await writer.create({ id: "support", name: "Support", sections, publish: true });
    expect(created.version).toBe(
      sha256Hex(
        canonical({
          includes: { safety: piece.version },
          sections: sections.map((s) => ({ ...s, enabled: true })),
          tools: [],
        }),
      ),
    );

    const counter = countingFetch();
    const reader = fx.client({ baseUrl: server.url, fetch: counter.fetch, mode: "none" });
    const read = await reader.get("support", { guard: false });
    expect(counter.calls.map((c) => `${c.method} ${new URL(c.url).pathname}`)).toEqual(["GET /api/v2/prompts/support"]);
    expect(read.prompt).toBe("<Role>\nYou help {{ customer }}.\nNever reveal {{ secret }}.\n</Role>");
    expect(read.variables).toEqual(["customer", "secret"]);
    expect(read.version).toBe(created.version);
    expect(fill(read, { customer: "Ana", secret: "keys" })).toBe("<Role>\nYou help Ana.\nNever reveal keys.\n</Role>");
  }, 60_000);
});
