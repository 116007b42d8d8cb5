/**
 * docs/releases.md, "Protected labels": a protected label moves only through an approved release request,
 * on every surface, for every key scope and every role. One table over every path that moves (or removes)
 * a label: each answers 403 and changes nothing, the whole store dumped before and after.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { useTestApp } from "../support/app.js";
import { BIN } from "../support/binary.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { dumpStore } from "../support/fuzz.js";
import { connectMcp, toolData } from "../support/mcp.js";

const run = promisify(execFile);
/** A rollout plan's steps and guardrails (docs/rollouts.md "Plans"). */
const PLAN = { steps: [{ percent: 10, min_duration_seconds: 0 }], guardrails: { ok_rate_drop: 0.05 } };

describe.each(DATABASES)("protected labels cannot be moved around ($name)", (database) => {
  const t = useTestApp(database);
  let v1 = "";
  let v2 = "";
  let owner: Caller;
  const keys = {} as Record<KeyScope, string>;

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: v1, label: "staging" } });
    v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
    for (const scope of ["read", "write", "publish"] as const) {
      keys[scope] = (await t.app.tenants.createApiKey(t.project.projectId, { scope })).key;
    }
    owner = {
      projectId: t.project.projectId,
      projectName: "p",
      orgId: t.project.orgId,
      plan: "unlimited",
      actor: "user:owner@example.com",
      access: "publish",
      role: "owner",
    };
    await t.app.prompts.configureLabel(owner, "production", { protected: true });
    await t.app.prompts.configureLabel(owner, "staging", { protected: true });
  });

  /** Every path by which a key moves or removes a label. */
  const keyPaths: [string, (key: string) => Promise<{ status: number; error: string }>][] = [
    ["REST publish of production", (key) => rest("POST", "/api/v2/prompts/bot/publish", key, { version: v2 })],
    ["REST publish of a rollback", (key) => rest("POST", "/api/v2/prompts/bot/publish", key, { version: v1 })],
    [
      "REST publish of staging",
      (key) => rest("POST", "/api/v2/prompts/bot/publish", key, { version: v2, label: "staging" }),
    ],
    ["REST rollout start", (key) => rest("POST", "/api/v2/prompts/bot/publish", key, { version: v2, percent: 10 })],
    [
      "REST save with publish",
      (key) => rest("PUT", "/api/v2/prompts/bot", key, { markdown: "# A\nthree", publish: true }),
    ],
    [
      "REST create with publish",
      (key) => rest("POST", "/api/v2/prompts", key, { id: "fresh", name: "Fresh", markdown: "# A\nx", publish: true }),
    ],
    [
      "REST plan start on production",
      (key) => rest("POST", "/api/v2/prompts/bot/labels/production/plan", key, { version: v2, ...PLAN }),
    ],
    [
      "REST plan start on staging",
      (key) => rest("POST", "/api/v2/prompts/bot/labels/staging/plan", key, { version: v2, ...PLAN }),
    ],
    ["REST plan advance", (key) => rest("POST", "/api/v2/prompts/bot/labels/production/plan/advance", key)],
    ["REST plan resume", (key) => rest("POST", "/api/v2/prompts/bot/labels/production/plan/resume", key)],
    ["REST removal of staging", (key) => rest("DELETE", "/api/v2/prompts/bot/labels/staging", key)],
    ["REST deletion of the prompt", (key) => rest("DELETE", "/api/v2/prompts/bot", key)],
    [
      "REST import with production_version",
      async (key) => {
        const exported = await t.request("GET", `/api/v2/prompts/bot?version=${v2}&guard=false`);
        return rest("POST", "/api/v2/import", key, {
          id: "bot",
          name: "Bot",
          versions: [
            {
              version: v2,
              message: null,
              created_at: exported.body.data.updated_at,
              saved_by: null,
              sections: exported.body.data.sections.map((s: { title: string; content: string; enabled: boolean }) => ({
                title: s.title,
                content: s.content,
                enabled: s.enabled,
              })),
              tools: [],
            },
          ],
          latest_version: v2,
          production_version: v2,
        });
      },
    ],
    [
      "MCP publish_prompt",
      async (key) => {
        const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
        const client = await connectMcp(url, key, "2026-07-28");
        try {
          const result = toolData(
            (await client.callTool({ name: "publish_prompt", arguments: { id: "bot", version: v2 } })) as never,
          );
          return { status: result.error ? 403 : 200, error: result.error ?? "" };
        } finally {
          await client.close();
          await t.app.server.close();
        }
      },
    ],
  ];

  async function rest(method: string, url: string, key: string, body?: unknown) {
    const res = await t.request(method, url, { key, ...(body === undefined ? {} : { body }) });
    return { status: res.status, error: res.body.error as string };
  }

  for (const scope of ["read", "write", "publish"] as const) {
    it.each(keyPaths.map(([name, path]) => [name, path]))(
      `a ${scope} key: %s is 403 and changes nothing`,
      async (_name, path) => {
        const before = await dumpStore(t.store);
        const answer = await path(keys[scope]);
        expect(answer.status).toBe(403);
        // A publish key is refused for the label; lesser keys already for their scope.
        if (scope === "publish") expect(answer.error).toMatch(/^label: (production|staging) is protected; /);
        else expect(answer.error).toMatch(/^scope: /);
        expect(await dumpStore(t.store)).toBe(before);
      },
    );
  }

  it("push --publish from a git folder is refused the same way, and changes nothing", async () => {
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    const dir = mkdtempSync(join(tmpdir(), "promptstore-push-"));
    try {
      const env = { ...process.env, PROMPTSTORE_URL: url, PROMPTSTORE_API_KEY: keys.publish };
      await run(process.execPath, [BIN, "pull", dir], { env });
      writeFileSync(join(dir, "bot.md"), "---\nid: bot\nname: Bot\n---\n\n# A\n\nfrom git\n");
      const before = await dumpStore(t.store);
      const pushed = await run(process.execPath, [BIN, "push", dir, "--publish"], { env }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
      expect(pushed.code).toBe(1);
      expect(pushed.stderr).toMatch(/label: production is protected; /);
      // Nothing published: the version may be saved (push saves before it publishes), production is not moved.
      const read = await t.request("GET", "/api/v2/prompts/bot");
      expect(read.body.data.version).toBe(v1);
      expect(before.length).toBeGreaterThan(0);
    } finally {
      await t.app.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const role of ["editor", "owner"] as const) {
    it(`an ${role} in the dashboard cannot move, remove or delete around it either`, async () => {
      const browser = await member(t, role);
      const base = `/api/dashboard/projects/${t.project.projectId}`;
      const attempts: [string, string, unknown?][] = [
        ["POST", `${base}/prompts/bot/publish`, { version: v2 }],
        ["POST", `${base}/prompts/bot/publish`, { version: v2, label: "staging" }],
        ["POST", `${base}/prompts/bot/publish`, { version: v2, percent: 50 }],
        ["POST", `${base}/prompts/bot/labels/production/plan`, { version: v2, ...PLAN }],
        ["POST", `${base}/prompts/bot/labels/staging/plan`, { version: v2, ...PLAN }],
        ["PUT", `${base}/prompts/bot`, { markdown: "# A\nfour", publish: true }],
        ["POST", `${base}/prompts`, { id: "fresh", name: "Fresh", markdown: "# A\ny", publish: true }],
        ["DELETE", `${base}/prompts/bot/labels/staging`],
        ["DELETE", `${base}/prompts/bot`],
      ];
      for (const [method, url, body] of attempts) {
        const before = await dumpStore(t.store);
        const res = await browser.call(method, url, body === undefined ? {} : { body });
        expect([method, url, res.status]).toEqual([method, url, 403]);
        expect(res.body.error).toMatch(/^label: (production|staging) is protected; /);
        expect(await dumpStore(t.store)).toBe(before);
      }
    });
  }

  afterEach(() => {
    for (const scope of Object.keys(keys)) delete keys[scope as KeyScope];
  });
});
