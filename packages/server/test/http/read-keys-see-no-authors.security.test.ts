/**
 * docs/decisions.md, "`saved_by` for read keys": a `read` key is an application and sees that a person acted
 * (`user`), never their e-mail address; a key prefix names no one and stays. Write and publish keys and the
 * dashboard see every author. One table over every surface that names an actor to a key.
 */
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { type Browser, member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, toolData } from "../support/mcp.js";
import { type EventStreamReader, openEventStream } from "../support/sse.js";

describe.each(DATABASES)("who acted, as each key sees it ($name)", (database) => {
  const t = useTestApp(database);
  const keys = {} as Record<KeyScope, string>;
  let editor: Browser;
  let owner: Browser;
  let url = "";
  let releaseId = "";
  const live = {} as Record<KeyScope, EventStreamReader>;

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    for (const scope of ["read", "write", "publish"] as const) {
      keys[scope] = (await t.app.tenants.createApiKey(t.project.projectId, { scope })).key;
    }
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    for (const scope of ["read", "write", "publish"] as const) live[scope] = await openEventStream(url, keys[scope]);
    for (const scope of ["read", "write", "publish"] as const) await live[scope].next((e) => e.event === "ready");

    editor = await member(t, "editor");
    owner = await member(t, "owner");
    const prompts = promptsUrl(t.project.projectId);
    await editor.call("POST", prompts, { body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true } });
    const v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
    const base = `/api/dashboard/projects/${t.project.projectId}`;
    await owner.call("PUT", `${base}/labels/production`, { body: { protected: true } });
    releaseId = (
      await editor.call("POST", `${base}/prompts/bot/releases`, { body: { label: "production", version: v2 } })
    ).body.data.id;
    const approved = await owner.call("POST", `${base}/releases/${releaseId}/approve`, { body: {} });
    expect(approved.status).toBe(200);
  });

  afterEach(async () => {
    for (const reader of Object.values(live)) reader.close();
  });

  const rest = async (key: string, path: string): Promise<any> => {
    const answer = (await (await fetch(`${url}${path}`, { headers: { "x-api-key": key } })).json()) as any;
    return answer.data;
  };
  /** The (requester, decider) of each release event a stream carries. */
  const releaseActors = (events: { event?: string; data?: string }[]) =>
    events
      .filter((e) => e.event?.startsWith("release."))
      .map((e) => JSON.parse(e.data as string).release)
      .map((r: { requested_by: string; decided_by: string | null }) => [r.requested_by, r.decided_by]);

  /** Every surface that names an actor to a key: what it names. */
  const surfaces: [string, (scope: KeyScope) => Promise<unknown>][] = [
    [
      "REST history",
      async (scope) => (await rest(keys[scope], "/api/v2/prompts/bot/versions")).versions.map((v: any) => v.saved_by),
    ],
    [
      "MCP list_versions",
      async (scope) => {
        const client = await connectMcp(url, keys[scope], "2026-07-28");
        try {
          const result = toolData(
            (await client.callTool({ name: "list_versions", arguments: { id: "bot" } })) as never,
          );
          return result.data.versions.map((v: any) => v.saved_by);
        } finally {
          await client.close();
        }
      },
    ],
    [
      "REST release list",
      async (scope) =>
        (await rest(keys[scope], "/api/v2/releases")).releases.map((r: any) => [r.requested_by, r.decided_by]),
    ],
    [
      "REST release read",
      async (scope) => {
        const release = await rest(keys[scope], `/api/v2/releases/${releaseId}`);
        return [[release.requested_by, release.decided_by]];
      },
    ],
    [
      "live events",
      async (scope) => {
        await live[scope].next((e) => e.event === "release.approved");
        return releaseActors(live[scope].received);
      },
    ],
    [
      "replayed events",
      async (scope) => {
        const replay = await openEventStream(url, keys[scope], { "last-event-id": "0" });
        try {
          await replay.next((e) => e.event === "ready");
          return releaseActors(replay.received);
        } finally {
          replay.close();
        }
      },
    ],
  ];

  /** What a surface names, with `person` standing for how a person is shown. */
  const expectedOf = (name: string, person: (who: Browser) => string) => {
    if (name === "REST history" || name === "MCP list_versions") return [`key:${t.key.slice(0, 12)}`, person(editor)];
    // A stream carries the request and then the approval.
    if (name.endsWith("events")) {
      return [
        [person(editor), null],
        [person(editor), person(owner)],
      ];
    }
    return [[person(editor), person(owner)]];
  };

  // One test walks the whole table: the setup (two accounts, a release) is most of the cost.
  it("a read key sees `user` for a person and the key prefix for a key; write and publish keys see e-mails", async () => {
    for (const [name, seen] of surfaces) {
      const shown = await seen("read");
      expect({ name, shown }).toEqual({ name, shown: expectedOf(name, () => "user") });
      expect(JSON.stringify(shown)).not.toContain("@");
      const named = expectedOf(name, (who) => `user:${who.email}`);
      for (const scope of ["write", "publish"] as const) {
        expect({ name, scope, shown: await seen(scope) }).toEqual({ name, scope, shown: named });
      }
    }
  });

  it("the dashboard shows people's e-mails to members, whatever keys see", async () => {
    const history = await editor.call("GET", `${promptsUrl(t.project.projectId)}/bot/versions`);
    expect(history.body.data.versions.map((v: any) => v.saved_by)).toEqual([
      `key:${t.key.slice(0, 12)}`,
      `user:${editor.email}`,
    ]);
  });
});
