/**
 * Nothing in an error says whether a prompt (or webhook, project, organization, key) exists in another
 * project: on every route, the answer for another project's id is byte-identical to the answer for an id
 * that exists nowhere, apart from the request id (and the id itself, which the message names: both are of
 * the same length and replaced by one placeholder before comparing).
 */
import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestProject, useTestApp } from "../support/app.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

const THEIRS = "their-prompt";
const NOWHERE = "no-such-prmt";
const hex = (n: number) => randomBytes(n).toString("hex");

describe.each(DATABASES)("another project's ids answer like ids that exist nowhere ($name)", (database) => {
  const t = useTestApp(database);
  let mine: TestProject;
  let theirs: TestProject;
  let owner: Browser;
  let their: { hash: string; webhook: string; keyId: string };

  beforeEach(async () => {
    // Unlimited: no rate-limit headers counting down between the two requests compared.
    mine = await t.newProject({ plan: "unlimited" });
    theirs = await t.newProject({ plan: "unlimited" });
    const created = await t.request("POST", "/api/v2/prompts", {
      key: theirs.key,
      body: promptBody(1, { id: THEIRS, publish: true }),
    });
    const hook = await t.request("POST", "/api/v2/webhooks", {
      key: theirs.key,
      body: { url: "https://hooks.example/x", events: ["prompt.published"], enabled: false },
    });
    await t.request("POST", "/api/v2/prompts", { key: mine.key, body: promptBody(2, { id: "mine" }) });
    their = { hash: created.body.data.version, webhook: hook.body.data.id, keyId: theirs.keyId };
    owner = await member(t, "owner");
    await t.app.accounts.store.addMembership(mine.orgId, owner.userId, "owner");
  });

  /** Status, headers but the request id, and body, with `id` and `other` both written as `<ID>`. */
  function normalized(res: { status: number; headers: Record<string, unknown>; body: unknown }, ids: string[]) {
    const { "x-request-id": _, date: __, ...headers } = res.headers;
    let body = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
    for (const id of ids) body = body.split(id).join("<ID>");
    return { status: res.status, headers, body: body.replace(/"id":\d+/, '"id":0') };
  }

  async function compare(
    send: (id: string) => Promise<{ status: number; headers: Record<string, unknown>; body: unknown }>,
    other: string,
    nowhere: string,
  ) {
    expect(other.length).toBe(nowhere.length);
    const a = normalized(await send(other), [other, nowhere]);
    const b = normalized(await send(nowhere), [other, nowhere]);
    expect(a).toEqual(b);
    return a;
  }

  it("v1 and v2 prompt routes", async () => {
    const as = (method: string, url: string, body?: unknown) =>
      t.request(method, url, { key: mine.key, ...(body === undefined ? {} : { body }) });
    const routes: [string, (id: string) => string, unknown?][] = [
      ["GET", (id) => `/api/v1/prompts/${id}`],
      ["GET", (id) => `/api/v2/prompts/${id}`],
      ["GET", (id) => `/api/v2/prompts/${id}?version=latest&guard=false`],
      ["GET", (id) => `/api/v2/prompts/${id}?version=${their.hash}`],
      ["GET", (id) => `/api/v2/prompts/${id}?version=${their.hash.slice(0, 7)}`],
      ["GET", (id) => `/api/v2/prompts/${id}/versions`],
      ["PUT", (id) => `/api/v2/prompts/${id}`, { markdown: "# A\nx" }],
      ["POST", (id) => `/api/v2/prompts/${id}/publish`, {}],
      ["POST", (id) => `/api/v2/prompts/${id}/publish`, { version: their.hash }],
      ["DELETE", (id) => `/api/v2/prompts/${id}`],
    ];
    for (const [method, url, body] of routes) {
      const answer = await compare((id) => as(method, url(id), body), THEIRS, NOWHERE);
      expect(answer.status, `${method} ${url(THEIRS)}`).toBe(404);
    }
    // Their version hash on a prompt of ours: like a hash that is no one's.
    const nobody = hex(32);
    await compare((h) => as("GET", `/api/v2/prompts/mine?version=${h}`), their.hash, nobody);
    await compare((h) => as("GET", `/api/v2/prompts/mine?version=${h}`), their.hash.slice(0, 9), nobody.slice(0, 9));
    await compare((h) => as("POST", "/api/v2/prompts/mine/publish", { version: h }), their.hash, nobody);
    // Their prompt is untouched by all of it.
    const read = await t.request("GET", `/api/v2/prompts/${THEIRS}`, { key: theirs.key });
    expect([read.status, read.body.data.version, read.body.data.production_version]).toEqual([
      200,
      their.hash,
      their.hash,
    ]);
  });

  it("webhook routes", async () => {
    const nowhere = `whk_${hex(12)}`;
    for (const [method, url, body] of [
      ["GET", (id: string) => `/api/v2/webhooks/${id}`],
      ["PATCH", (id: string) => `/api/v2/webhooks/${id}`, { enabled: false }],
      ["POST", (id: string) => `/api/v2/webhooks/${id}/rotate-secret`, {}],
      ["GET", (id: string) => `/api/v2/webhooks/${id}/deliveries`],
      ["DELETE", (id: string) => `/api/v2/webhooks/${id}`],
    ] as const) {
      await compare(
        (id) => t.request(method, url(id), { key: mine.key, ...(body === undefined ? {} : { body }) }),
        their.webhook,
        nowhere,
      );
    }
  });

  it("MCP tools and prompts", async () => {
    const rpc = async (method: string, params: unknown) => {
      const res = await t.request("POST", "/api/v2/mcp", {
        key: mine.key,
        body: { jsonrpc: "2.0", id: 1, method, params },
        headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      });
      return {
        ...res,
        body:
          String(res.body)
            .split("\n")
            .find((l) => l.startsWith("data: ")) ?? res.body,
      };
    };
    for (const [tool, args] of [
      ["get_prompt", { version: "latest" }],
      ["list_versions", {}],
      ["save_prompt_version", { markdown: "# A\nx" }],
      ["publish_prompt", {}],
      ["delete_prompt", {}],
    ] as const) {
      const answer = await compare(
        (id) => rpc("tools/call", { name: tool, arguments: { id, ...args } }),
        THEIRS,
        NOWHERE,
      );
      expect(answer.body, tool).toContain('"isError":true');
    }
    await compare(
      (id) => rpc("prompts/get", { name: id, arguments: { company: "x", language: "y" } }),
      THEIRS,
      NOWHERE,
    );
  });

  it("dashboard routes: another organization's project, organization and key", async () => {
    const nowhereProject = `proj_${hex(12)}`;
    for (const [method, url, body] of [
      ["GET", (p: string) => `/api/dashboard/projects/${p}/prompts`],
      ["GET", (p: string) => `/api/dashboard/projects/${p}/prompts/${THEIRS}`],
      ["PUT", (p: string) => `/api/dashboard/projects/${p}/prompts/${THEIRS}`, { markdown: "# A\nx" }],
      ["POST", (p: string) => `/api/dashboard/projects/${p}/prompts/${THEIRS}/publish`, {}],
      ["DELETE", (p: string) => `/api/dashboard/projects/${p}/prompts/${THEIRS}`],
      ["GET", (p: string) => `/api/dashboard/projects/${p}/webhooks`],
      ["GET", (p: string) => `/api/dashboard/projects/${p}/keys`],
    ] as const) {
      await compare(
        (p) => owner.call(method, url(p), body === undefined ? {} : { body }),
        theirs.projectId,
        nowhereProject,
      );
    }
    // Their prompt id in our project, their webhook id and key id through our project.
    await compare(
      (id) => owner.call("GET", `/api/dashboard/projects/${mine.projectId}/prompts/${id}`),
      THEIRS,
      NOWHERE,
    );
    await compare(
      (id) => owner.call("DELETE", `/api/dashboard/projects/${mine.projectId}/webhooks/${id}`),
      their.webhook,
      `whk_${hex(12)}`,
    );
    await compare(
      (id) => owner.call("DELETE", `/api/dashboard/projects/${mine.projectId}/keys/${id}`),
      their.keyId,
      `key_${hex(12)}`,
    );
    await compare((o) => owner.call("GET", `/api/dashboard/orgs/${o}/usage`), theirs.orgId, `org_${hex(12)}`);
    // Their key still works.
    expect((await t.request("GET", "/api/v2/prompts", { key: theirs.key })).status).toBe(200);
  });
});
