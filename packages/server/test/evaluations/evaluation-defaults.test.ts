/**
 * A prompt's evaluation defaults (docs/evaluations.md, "Default checks") on both databases: none, saved,
 * replaced; scopes and roles; bad input naming the field; a deleted dataset reads as none; the defaults go
 * with their prompt; the audit trail.
 */
import { canonical, sha256Hex } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { createDataset } from "../support/evaluations.js";

const CHECKS = [
  { type: "expected", trim: true },
  { type: "contains", name: "says you", value: "YOU" },
];
const NONE = { prompt_id: "support", checks: null, dataset: null, updated_at: null, updated_by: null };
const url = "/api/v2/prompts/support/evaluation-defaults";
const setHash = (checks: unknown) => sha256Hex(canonical(checks)).slice(0, 12);

describe.each(DATABASES)("evaluation defaults ($name)", (database) => {
  const t = useTestApp(database);

  async function prompt(id = "support") {
    const res = await t.request("POST", "/api/v2/prompts", {
      body: { id, name: "Support", sections: [{ title: "Role", content: "You help {{ customer }}." }] },
    });
    expect(res.status).toBe(201);
  }

  it("reads none, saves a check set and a dataset, replaces them; the audit trail points at the sets' hashes", async () => {
    await prompt();
    const dataset = await createDataset(t, "customers", [{ vars: { customer: "Ada" } }]);
    expect((await t.request("GET", url)).body).toEqual({ success: true, data: NONE });

    const saved = await t.request("PUT", url, { body: { checks: CHECKS, dataset: dataset.id } });
    expect(saved.status).toBe(200);
    const audit1 = (await t.request("GET", "/api/v2/audit")).body.data.entries[0];
    expect(saved.body.data).toEqual({
      prompt_id: "support",
      checks: CHECKS,
      dataset: dataset.id,
      updated_at: audit1.at,
      updated_by: audit1.actor,
    });
    expect(audit1.actor).toMatch(/^key:ps_/);
    expect((await t.request("GET", url)).body.data).toEqual(saved.body.data);
    expect([audit1.action, audit1.target, audit1.before, audit1.after]).toEqual([
      "evaluation.defaults_saved",
      "support",
      null,
      setHash(CHECKS),
    ]);

    // Saved again: in place of the first; without a dataset, none.
    const other = [{ type: "max_chars", value: 200 }];
    const replaced = await t.request("PUT", url, { body: { checks: other } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({ checks: other, dataset: null });
    expect((await t.request("GET", url)).body.data).toMatchObject({ checks: other, dataset: null });
    const audit2 = (await t.request("GET", "/api/v2/audit")).body.data.entries[0];
    expect([audit2.action, audit2.before, audit2.after]).toEqual([
      "evaluation.defaults_saved",
      setHash(CHECKS),
      setHash(other),
    ]);
  });

  it("reading needs read, saving needs write; a read key sees a person's e-mail as `user`", async () => {
    await prompt();
    const read = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const write = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "write" })).key;
    const refused = await t.request("PUT", url, { key: read, body: { checks: CHECKS } });
    expect(refused.status).toBe(403);
    expect((await t.request("GET", url)).body.data).toEqual(NONE);
    expect((await t.request("PUT", url, { key: write, body: { checks: CHECKS } })).status).toBe(200);
    expect((await t.request("GET", url, { key: read })).body.data.checks).toEqual(CHECKS);

    // The dashboard: a viewer reads, an editor saves (its e-mail recorded), a read key does not see the e-mail.
    const base = `/api/dashboard/projects/${t.project.projectId}/prompts/support/evaluation-defaults`;
    const viewer = await member(t, "viewer");
    expect((await viewer.call("GET", base)).body.data.checks).toEqual(CHECKS);
    const viewerSave = await viewer.call("PUT", base, { body: { checks: CHECKS } });
    expect(viewerSave.status).toBe(403);
    const editor = await member(t, "editor");
    const edited = await editor.call("PUT", base, { body: { checks: [{ type: "json" }] } });
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ checks: [{ type: "json" }], updated_by: `user:${editor.email}` });
    expect((await t.request("GET", url, { key: read })).body.data).toMatchObject({
      checks: [{ type: "json" }],
      updated_by: "user",
    });
    // A mutation without the CSRF token is refused.
    expect((await editor.call("PUT", base, { body: { checks: CHECKS }, csrf: null })).status).toBe(403);
  });

  it("refuses bad input with a 400 naming the field, and an unknown prompt or dataset with a 404", async () => {
    await prompt();
    const cases: [unknown, number, string][] = [
      [{}, 400, "checks: required"],
      [{ checks: [] }, 400, "checks: must hold at least one check"],
      [{ checks: [{ type: "contains", value: "" }] }, 400, "checks[0].value: must not be empty"],
      [
        { checks: [{ type: "nope" }] },
        400,
        "checks[0].type: must have a type: equals, contains, not_contains, regex, json, json_schema, tool_call, max_chars, expected, judge, webhook",
      ],
      [
        { checks: [{ type: "regex", pattern: "(a" }] },
        400,
        "checks[0].pattern: is not a pattern RE2 takes: error parsing regexp: missing closing ): `(a`",
      ],
      [
        { checks: [{ type: "json" }, { type: "json", name: "json" }] },
        400,
        'checks[1].name: "json" is also check 0\'s name',
      ],
      [{ checks: CHECKS, dataset: "customers" }, 400, "dataset: must be a dataset id (ds_ and 24 hex characters)"],
      [{ checks: CHECKS, extra: 1 }, 400, "extra: is not a known field"],
      [
        { checks: CHECKS, dataset: "ds_0123456789abcdef01234567" },
        404,
        "dataset: ds_0123456789abcdef01234567 not found",
      ],
    ];
    for (const [body, status, error] of cases) {
      const res = await t.request("PUT", url, { body });
      expect([res.status, res.body], JSON.stringify(body)).toEqual([status, { success: false, error }]);
    }
    // Nothing was saved by any of them.
    expect((await t.request("GET", url)).body.data).toEqual(NONE);

    // A dataset of another project is not found here.
    const elsewhere = await t.newProject();
    const theirs = await createDataset(t, "theirs", [{ vars: {} }], elsewhere.key);
    const foreign = await t.request("PUT", url, { body: { checks: CHECKS, dataset: theirs.id } });
    expect([foreign.status, foreign.body.error]).toEqual([404, `dataset: ${theirs.id} not found`]);

    const unknown = await t.request("GET", "/api/v2/prompts/nobody/evaluation-defaults");
    expect(unknown.status).toBe(404);
    expect(
      (await t.request("PUT", "/api/v2/prompts/nobody/evaluation-defaults", { body: { checks: CHECKS } })).status,
    ).toBe(404);
  });

  it("a deleted dataset reads as none; the defaults go with their prompt", async () => {
    await prompt();
    const dataset = await createDataset(t, "customers", [{ vars: { customer: "Ada" } }]);
    await t.request("PUT", url, { body: { checks: CHECKS, dataset: dataset.id } });
    expect((await t.request("DELETE", `/api/v2/datasets/${dataset.id}`)).status).toBe(200);
    expect((await t.request("GET", url)).body.data).toMatchObject({ checks: CHECKS, dataset: null });

    expect((await t.request("DELETE", "/api/v2/prompts/support")).status).toBe(200);
    await prompt();
    expect((await t.request("GET", url)).body.data).toEqual(NONE);
  });
});
