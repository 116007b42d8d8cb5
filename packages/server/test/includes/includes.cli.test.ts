/**
 * `promptstore update-includes` (docs/includes.md, "Updating on purpose"): one prompt's includes, or from the
 * piece every chosen prompt that includes it; what moved and the outcome per prompt; exit 1 on a refusal with
 * the server's words.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cli } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { type ListeningApp, listeningApp } from "../support/listening-app.js";
import { pinnedHash } from "./includes-support.js";

const apps: ListeningApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

const short = (hash: string) => hash.slice(0, 12);

describe.each(DATABASES)("promptstore update-includes ($name)", (database) => {
  it("updates one prompt, then the rest from the piece; refusals exit 1 with the server's words", async () => {
    const app = await listeningApp(database);
    apps.push(app);
    const env = { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key };
    const ps = (...args: string[]) => cli("", args, env);
    const create = async (id: string, content: string) =>
      (
        await app.call("POST", "/api/v2/prompts", {
          id,
          name: id,
          sections: [{ title: "S", content }],
          publish: true,
        })
      ).body.data.version;
    const read = async (id: string) =>
      (await app.call("GET", `/api/v2/prompts/${id}?guard=false`)).body.data as { version: string; prompt: string };

    const v1 = await create("safety", "one");
    await create("support", "Rules: {{> safety}}");
    await create("faq", "{{> safety}}!");
    const v2 = (
      await app.call("PUT", "/api/v2/prompts/safety", { sections: [{ title: "S", content: "two" }], publish: true })
    ).body.data.version;
    const s2 = pinnedHash([{ title: "S", content: "Rules: {{> safety}}" }], { safety: v2 });

    // Saved, not published: production still serves the old pin.
    const saved = await ps("update-includes", "support", "--message", "take two");
    expect(saved).toMatchObject({ code: 0, stderr: "" });
    expect(saved.stdout).toBe(`support: safety ${short(v1)} → ${short(v2)}, saved ${short(s2)}\n`);
    expect((await read("support")).prompt).toBe("<S>\nRules: one\n</S>");
    const history = (await app.call("GET", "/api/v2/prompts/support/versions")).body.data.versions;
    expect(history[0]).toMatchObject({ version: s2, message: "take two" });
    // Asked again with --publish: the same version is found, and moves.
    const published = await ps("update-includes", "support", "--publish");
    expect(published.stdout).toBe(
      `support: safety ${short(v1)} → ${short(v2)}, ${short(s2)} existed already, published\n`,
    );
    expect(await read("support")).toEqual(expect.objectContaining({ version: s2, prompt: "<S>\nRules: two\n</S>" }));
    const again = await ps("update-includes", "support");
    expect(again.stdout).toBe(`support: includes up to date at ${short(s2)}\n`);

    // From the piece: each chosen prompt on its own; one refused is answered beside the others, and exits 1.
    const f2 = pinnedHash([{ title: "S", content: "{{> safety}}!" }], { safety: v2 });
    const from = await ps("update-includes", "--from", "safety", "--prompts", "faq,nope", "--publish");
    expect(from.code).toBe(1);
    expect(from.stdout).toBe(
      `faq: safety ${short(v1)} → ${short(v2)}, saved ${short(f2)}, published\nnope: refused (404): prompt nope not found\n`,
    );
    expect(from.stderr).toBe("error: refused for nope\n");
    expect((await read("faq")).prompt).toBe("<S>\ntwo!\n</S>");
    const none = await ps("update-includes", "--from", "safety", "--json");
    expect(none).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(none.stdout)).toEqual({ id: "safety", results: [] });

    // Refusals: the server's words, exit 1.
    const unknown = await ps("update-includes", "nope");
    expect(unknown).toMatchObject({ code: 1, stdout: "", stderr: "error: nope: prompt nope not found (404)\n" });
    const badOnly = await ps("update-includes", "support", "--only", "a,,b");
    expect(badOnly.stderr).toBe("error: --only: give prompt ids separated by commas (a,b)\n");
    const neither = await ps("update-includes");
    expect(neither.code).toBe(1);
    expect(neither.stderr).toBe(
      "error: update-includes needs either a prompt (update its includes) or --from <piece> (update the prompts that include it)\n",
    );
    const write = (await app.app.tenants.createApiKey(app.caller.projectId, { scope: "write" })).key;
    const scoped = await cli("", ["update-includes", "support", "--publish", "--json"], {
      ...env,
      PROMPTSTORE_API_KEY: write,
    });
    expect(scoped.code).toBe(1);
    expect(scoped.stderr).toBe(
      `${JSON.stringify({ error: "support: scope: updating a prompt's includes and publishing needs a key with scope publish; this key has scope write (403)" })}\n`,
    );
  });

  it("answers the server's document with --json", async () => {
    const app = await listeningApp(database);
    apps.push(app);
    const env = { PROMPTSTORE_URL: app.url, PROMPTSTORE_API_KEY: app.key };
    const v1 = (
      await app.call("POST", "/api/v2/prompts", {
        id: "safety",
        name: "Safety",
        sections: [{ title: "S", content: "one" }],
        publish: true,
      })
    ).body.data.version;
    const s1 = (
      await app.call("POST", "/api/v2/prompts", {
        id: "support",
        name: "Support",
        sections: [{ title: "S", content: "{{> safety}}" }],
        publish: true,
      })
    ).body.data.version;
    const v2 = (
      await app.call("PUT", "/api/v2/prompts/safety", { sections: [{ title: "S", content: "two" }], publish: true })
    ).body.data.version;
    const res = await cli("", ["update-includes", "support", "--only", "safety", "--json"], env);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      id: "support",
      from_version: s1,
      version: pinnedHash([{ title: "S", content: "{{> safety}}" }], { safety: v2 }),
      created: true,
      updated: [{ include: "safety", from: v1, to: v2 }],
      outcome: "saved",
      label: null,
    });
  });
});
