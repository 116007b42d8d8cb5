import { describe, expect, it } from "vitest";
import { promptBody } from "../support/app.js";
import { cli, cliJson, startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";
import { changes, openEventStream } from "../support/sse.js";

/** The real binary: a running server, and `promptstore prompt delete` from another process on its database. */
describe.each(DATABASES)("promptstore prompt delete ($name)", (database) => {
  const db = useBinaryDatabase(database);

  const started = async () => {
    db.server = await startServer(db.url);
    const bootstrap = db.server.events.find((e) => e.event === "bootstrap")!;
    const key = bootstrap.key.key as string;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${db.server!.url}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    return { key, project: bootstrap.project as { id: string; name: string }, call };
  };

  it("deletes a prompt a running server holds in its cache: its reads are 404 and its stream says prompt.deleted", async () => {
    const { key, project, call } = await started();
    expect((await call("POST", "/api/v2/prompts", promptBody(1, { id: "bot", publish: true }))).status).toBe(201);
    const reads = ["/api/v2/prompts/bot", "/api/v2/prompts/bot?version=latest&guard=false", "/api/v1/prompts/bot"];
    for (const path of reads) {
      expect((await call("GET", path)).status).toBe(200);
      expect((await call("GET", path)).status).toBe(200);
    }
    const stream = await openEventStream(db.server!.url, key);
    await stream.next((e) => e.event === "ready");
    try {
      expect(await cliJson(db.url, ["prompt", "delete", project.id, "bot"])).toEqual({ id: "bot", deleted: true });
      // PostgreSQL: every instance has dropped it before the command returns. SQLite has no channel between
      // processes: the server notices another process's commit within a quarter of a second.
      const deadline = Date.now() + (database.name === "postgres" ? 0 : 2000);
      for (const path of reads) {
        let status = (await call("GET", path)).status;
        while (status !== 404 && Date.now() < deadline) {
          // Not faster: the Free plan's 60 requests a minute must last the whole test.
          await new Promise((r) => setTimeout(r, 200));
          status = (await call("GET", path)).status;
        }
        expect(status, path).toBe(404);
      }
      await stream.next((e) => e.event === "prompt.deleted");
      expect(changes(stream).map((e) => e.type)).toEqual(["prompt.deleted"]);
      expect(changes(stream)[0]).toMatchObject({ prompt_id: "bot", production_version: null, latest_version: null });
    } finally {
      stream.close();
    }
    // The plan's slot is free: the Free project takes five prompts again.
    for (let n = 1; n <= 5; n++) expect((await call("POST", "/api/v2/prompts", promptBody(n))).status).toBe(201);
    expect((await call("POST", "/api/v2/prompts", promptBody(6))).status).toBe(403);
  });

  it("takes the project by name, prints a human line, and fails clearly (exit 1) for an unknown prompt or project", async () => {
    const { project, call } = await started();
    await call("POST", "/api/v2/prompts", promptBody(1, { id: "bot" }));
    const human = await cli(db.url, ["prompt", "delete", project.name, "bot"]);
    expect(human).toEqual({ code: 0, stdout: "deleted prompt bot and all its versions\n", stderr: "" });

    const again = await cli(db.url, ["prompt", "delete", project.id, "bot", "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toEqual({ error: "prompt bot not found" });
    const plain = await cli(db.url, ["prompt", "delete", project.id, "bot"]);
    expect(plain).toMatchObject({ code: 1, stderr: "error: prompt bot not found\n" });
    const noProject = await cli(db.url, ["prompt", "delete", "proj_nothing", "bot", "--json"]);
    expect(noProject.code).toBe(1);
    expect(JSON.parse(noProject.stderr)).toEqual({ error: "project proj_nothing not found" });
    expect((await cli(db.url, ["prompt", "delete", project.id])).code).not.toBe(0);
  });
});
