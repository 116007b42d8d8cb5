/**
 * The real server writes what it holds when it stops: outcomes taken just before a SIGTERM are read back by
 * the next server on the same database (docs/outcomes.md, "Storage").
 */
import { describe, expect, it } from "vitest";
import { cli, startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("outcomes at shutdown ($name)", (database) => {
  const db = useBinaryDatabase(database);

  it("are written before the server exits", async () => {
    const org = JSON.parse((await cli(db.url, ["org", "create", "acme", "--plan", "unlimited", "--json"])).stdout);
    const key = JSON.parse((await cli(db.url, ["project", "create", org.id, "p", "--json"])).stdout).key.key as string;
    db.server = await startServer(db.url);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${db.server?.url}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await res.json()) as any;
    };
    const created = await call("POST", "/api/v2/prompts", {
      id: "bot",
      name: "Bot",
      sections: [{ title: "Role", content: "You are a bot." }],
      publish: true,
    });
    const version = created.data.version as string;
    const outcomes = Array.from({ length: 250 }, (_, i) => ({
      prompt: "bot",
      version,
      label: "production",
      ok: i % 5 !== 0,
    }));
    expect((await call("POST", "/api/v2/outcomes", { outcomes })).data).toEqual({ accepted: 250, refused: [] });
    expect(await db.server.stop("SIGTERM")).toBe(0);

    db.server = await startServer(db.url);
    const read = await call("GET", "/api/v2/prompts/bot/outcomes");
    expect(
      read.data.series.map((s: { totals: { count: number; ok: number } }) => [s.totals.count, s.totals.ok]),
    ).toEqual([[250, 200]]);
  });
});
