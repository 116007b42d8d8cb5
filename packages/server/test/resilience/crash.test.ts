import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";

/**
 * A server killed with SIGKILL in the middle of a stream of saves and publishes: after a restart, every
 * save that was answered 2xx is readable by its hash, no version is partial, and both pointers of every
 * prompt name versions that exist.
 */
describe.each(DATABASES)("SIGKILL during writes ($name)", (database: TestDatabase) => {
  const env = useBinaryDatabase(database);

  it("loses no answered write and leaves nothing half-written", async () => {
    env.server = await startServer(env.url, { PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const key: string = env.server!.events.find((e) => e.event === "bootstrap")?.key.key;
    const url = env.server!.url;
    const send = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const prompts = ["alpha", "beta", "gamma"];
    for (const id of prompts) {
      expect(
        (await send("POST", "/api/v2/prompts", { id, name: id, markdown: "# Start\nv0", publish: true })).status,
      ).toBe(201);
    }

    const answered: { id: string; version: string; sections: number; tools: number }[] = [];
    const published: { id: string; version: string }[] = [];
    /** What a writer saw that it should not have: a status other than success, or an error while the server lived. */
    const unexpected: string[] = [];
    let stop = false;
    let killed = false;
    const writer = async (worker: number) => {
      for (let n = 0; !stop; n++) {
        const id = prompts[(worker + n) % prompts.length]!;
        const sectionCount = 1 + (n % 4);
        const tools =
          n % 3 === 0 ? [{ type: "function", function: { name: `t${n}`, parameters: { type: "object" } } }] : [];
        const body = {
          sections: Array.from({ length: sectionCount }, (_, i) => ({
            title: `S${i}`,
            content: `worker ${worker} save ${n} part ${i}`,
          })),
          tools,
          publish: n % 2 === 0,
        };
        try {
          const res = await send("PUT", `/api/v2/prompts/${id}`, body);
          if (res.status !== 200) unexpected.push(`save ${id}: ${res.status} ${JSON.stringify(res.body)}`);
          else answered.push({ id, version: res.body.data.version, sections: sectionCount, tools: tools.length });
          if (n % 5 === 4) {
            const pub = await send("POST", `/api/v2/prompts/${id}/publish`, {});
            if (pub.status !== 200) unexpected.push(`publish ${id}: ${pub.status} ${JSON.stringify(pub.body)}`);
            else published.push({ id, version: pub.body.data.version });
          }
        } catch (error) {
          // Only the kill may end a writer: a connection that failed while the server lived is a finding.
          if (!killed) unexpected.push(`${id}: ${error}`);
          return;
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await new Promise((r) => setTimeout(r, 700));
    killed = true;
    await env.server!.stop("SIGKILL");
    stop = true;
    await Promise.all(writers);
    expect(unexpected).toEqual([]);
    expect(published.length).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(10);

    // Restart on the same database: every answered save is there, whole.
    env.server = await startServer(env.url);
    for (const save of answered) {
      const res = await fetch(`${env.server!.url}/api/v2/prompts/${save.id}?version=${save.version}`, {
        headers: { "x-api-key": key },
      });
      expect(res.status, `${save.id}@${save.version}`).toBe(200);
      const data = ((await res.json()) as any).data;
      expect(data.sections).toHaveLength(save.sections);
      expect(data.tools?.length ?? 0).toBe(save.tools);
    }

    // Every answered publish names a version that is there.
    for (const pub of published) {
      const res = await fetch(`${env.server!.url}/api/v2/prompts/${pub.id}?version=${pub.version}`, {
        headers: { "x-api-key": key },
      });
      expect(res.status, `published ${pub.id}@${pub.version}`).toBe(200);
    }

    // No version without its sections, no tool count that disagrees with its tools, no dangling pointer.
    const store = await openStore(env.url);
    try {
      const versions = await store.db.selectFrom("versions").select(["prompt_id", "hash", "tool_count"]).execute();
      const sectionRows = await store.db.selectFrom("version_sections").select(["prompt_id", "hash"]).execute();
      const toolRows = await store.db.selectFrom("version_tools").select(["prompt_id", "hash"]).execute();
      const count = (rows: { prompt_id: string; hash: string }[]) => {
        const map = new Map<string, number>();
        for (const r of rows) map.set(`${r.prompt_id}/${r.hash}`, (map.get(`${r.prompt_id}/${r.hash}`) ?? 0) + 1);
        return map;
      };
      const sectionsOf = count(sectionRows);
      const toolsOf = count(toolRows);
      for (const v of versions) {
        expect(sectionsOf.get(`${v.prompt_id}/${v.hash}`) ?? 0).toBeGreaterThan(0);
        expect(toolsOf.get(`${v.prompt_id}/${v.hash}`) ?? 0).toBe(v.tool_count);
      }
      const known = new Set(versions.map((v) => `${v.prompt_id}/${v.hash}`));
      for (const p of await store.db.selectFrom("prompts").selectAll().execute()) {
        expect(known.has(`${p.id}/${p.latest_version}`)).toBe(true);
        if (p.production_version) expect(known.has(`${p.id}/${p.production_version}`)).toBe(true);
      }
    } finally {
      await store.close();
    }
  });
});
