/**
 * Export and import keep pins (docs/includes.md, "Export and import"): an exported version with includes carries
 * its content as written and its pins, the import restores them under the same hash; a pin of a version
 * neither the import nor the store holds is refused, naming the field. Versions without includes export as
 * they always did.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentHash } from "@promptstore/core/prompts/hash";
import { afterEach, describe, expect, it } from "vitest";
import { cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";
import { pinnedHash } from "./includes-support.js";

const dirs: string[] = [];
const apps: ListeningApp[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const app of apps.splice(0)) await app.close();
});

describe.each(DATABASES)("export and import of pins ($name)", (database) => {
  const started = async () => {
    const app = await listeningApp(database);
    apps.push(app);
    return { app, env: { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key } };
  };

  it("an exported version carries its pins and its text as written; the import restores the same hash", async () => {
    const { app: source, env } = await started();
    const dir = mkdtempSync(join(tmpdir(), "promptstore-includes-export-"));
    dirs.push(dir);
    // The dependent is older than its piece: the import must bring the piece in first.
    const s0 = (
      await source.call("POST", "/api/v2/prompts", {
        id: "support",
        name: "Support",
        sections: [{ title: "S", content: "plain" }],
        publish: true,
      })
    ).body.data.version;
    const v1 = (
      await source.call("POST", "/api/v2/prompts", {
        id: "safety",
        name: "Safety",
        sections: [{ title: "R", content: "Be kind." }],
        publish: true,
      })
    ).body.data.version;
    const written = [{ title: "S", content: "Rules: {{> safety}}" }];
    const s1 = (await source.call("PUT", "/api/v2/prompts/support", { sections: written, publish: true })).body.data
      .version;
    expect(s1).toBe(pinnedHash(written, { safety: v1 }));

    const file = join(dir, "bundle.json");
    expect((await cli("", ["export", file], env)).code).toBe(0);
    const bundle = JSON.parse(readFileSync(file, "utf8"));
    expect(bundle.prompts.map((p: { id: string }) => p.id)).toEqual(["support", "safety"]);
    const [plain, pinned] = bundle.prompts[0].versions;
    // Without includes: exactly the members an export always wrote.
    expect(plain).toEqual({
      version: s0,
      message: null,
      created_at: plain.created_at,
      saved_by: plain.saved_by,
      sections: [{ title: "S", content: "plain", enabled: true }],
      tools: [],
    });
    expect(plain.saved_by).toMatch(/^key:/);
    expect(Object.keys(plain)).toEqual(["version", "message", "created_at", "saved_by", "sections", "tools"]);
    expect(pinned).toEqual({
      version: s1,
      message: null,
      created_at: pinned.created_at,
      saved_by: plain.saved_by,
      sections: [{ title: "S", content: "Rules: {{> safety}}", enabled: true }],
      tools: [],
      includes: { safety: v1 },
    });

    const { app: target, env: targetEnv } = await started();
    const imported = await cli("", ["import", file, "--publish-as-source", "--json"], targetEnv);
    expect(imported.stderr).toBe("");
    expect(JSON.parse(imported.stdout).prompts.map((p: { id: string }) => p.id)).toEqual(["safety", "support"]);
    const read = (await target.call("GET", "/api/v2/prompts/support?guard=false")).body.data;
    expect(read).toMatchObject({ version: s1, prompt: "<S>\nRules: Be kind.\n</S>" });
    expect(read.includes).toEqual([
      { include: "safety", prompt: "safety", section: null, pointer: "production", version: v1 },
    ]);
    expect(read.sections[0].source).toBe("Rules: {{> safety}}");
    const usedBy = (await target.call("GET", "/api/v2/prompts/safety/included-by")).body.data.included_by;
    expect(usedBy.map((u: { prompt: string; version: string }) => [u.prompt, u.version])).toEqual([["support", s1]]);
    // Again: idempotent, nothing added.
    const twice = JSON.parse((await cli("", ["import", file, "--json"], targetEnv)).stdout);
    expect(twice.prompts.map((p: { versions_created: number }) => p.versions_created)).toEqual([0, 0]);

    // Into a store whose safety lacks that version (and a bundle without it): refused, naming the field.
    const { app: other, env: otherEnv } = await started();
    await other.call("POST", "/api/v2/prompts", {
      id: "safety",
      name: "Safety",
      sections: [{ title: "R", content: "Other rules." }],
    });
    const alone = join(dir, "alone.json");
    writeFileSync(
      alone,
      JSON.stringify({ ...bundle, prompts: bundle.prompts.filter((p: { id: string }) => p.id === "support") }),
    );
    const refused = await cli("", ["import", alone], otherEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: versions[0].includes.safety: prompt safety has no version ${v1}\n`);
    expect((await other.call("GET", "/api/v2/prompts/support")).status).toBe(404);
  });

  it("the import API checks a version's pins against its sections and its hash", async () => {
    const { app } = await started();
    const v1 = (
      await app.call("POST", "/api/v2/prompts", {
        id: "safety",
        name: "Safety",
        sections: [{ title: "R", content: "one" }],
      })
    ).body.data.version;
    const sections = [{ title: "S", content: "{{> safety}} {{> safety@latest}}" }];
    const hash = pinnedHash(sections, { safety: v1, "safety@latest": v1 });
    const body = (version: Record<string, unknown>) => ({
      id: "support",
      name: "Support",
      latest_version: hash,
      versions: [{ version: hash, created_at: "2026-01-01T00:00:00.000Z", sections, ...version }],
    });
    const missing = await app.call("POST", "/api/v2/import", body({ includes: { safety: v1 } }));
    expect(missing).toEqual({
      status: 400,
      body: {
        success: false,
        error: "versions[0].includes: has no pin for the include {{> safety@latest}} of sections[0]",
      },
    });
    const extra = await app.call(
      "POST",
      "/api/v2/import",
      body({ includes: { safety: v1, "safety@latest": v1, tone: v1 } }),
    );
    expect(extra.body.error).toBe("versions[0].includes.tone: the sections hold no include {{> tone}}");
    const other = pinnedHash(sections, { safety: v1, "safety@latest": "a".repeat(64) });
    const mismatch = await app.call("POST", "/api/v2/import", {
      ...body({ includes: { safety: v1, "safety@latest": "a".repeat(64) } }),
    });
    expect(mismatch.body.error).toBe(
      `versions[0].version: does not match the version's content and pins, whose hash is ${other}`,
    );
    const ok = await app.call("POST", "/api/v2/import", body({ includes: { safety: v1, "safety@latest": v1 } }));
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ id: "support", created: true, versions_created: 1, latest_version: hash });
    const read = (await app.call("GET", "/api/v2/prompts/support?guard=false")).body.data;
    expect(read.prompt).toBe("<S>\none one\n</S>");
    // Without pins, the sections are taken as they are: the text stays literal, as before includes.
    const literal = [{ title: "L", content: "{{> safety}}" }];
    const plainHash = contentHash({ sections: literal.map((l) => ({ ...l, enabled: true })), tools: [] });
    const literalHash = (
      await app.call("POST", "/api/v2/import", {
        id: "literal",
        name: "Literal",
        latest_version: plainHash,
        versions: [{ version: plainHash, created_at: "2026-01-01T00:00:00.000Z", sections: literal }],
      })
    ).body;
    expect(literalHash.success).toBe(true);
    expect((await app.call("GET", "/api/v2/prompts/literal?guard=false")).body.data.prompt).toBe(
      "<L>\n{{> safety}}\n</L>",
    );
  });
});
