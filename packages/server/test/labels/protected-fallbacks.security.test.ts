/**
 * docs/releases.md, "Protected labels": a protected label falls back only to a protected one. Otherwise a
 * prompt that lacks it would be served whatever the unprotected label points to, and that changes whenever
 * it moves, without approval. Every way of getting there is refused with a 409 naming the field the request
 * sent, on every path that sets label settings: the dashboard API and the operator's `label set`.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/service/access.js";
import { useTestApp } from "../support/app.js";
import { cli, cliJson } from "../support/binary.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

const PROTECT_FIRST =
  "protected: staging falls back to production, which is not protected: protect production first, or remove the fallback";
const FALLBACK_UNPROTECTED =
  "fallback: staging is protected and production is not: a protected label may fall back only to a protected one " +
  "(protect production first)";
const STAYS_PROTECTED =
  "protected: staging is protected and falls back to production, so production stays protected while it does " +
  "(change staging's fallback first)";

describe.each(DATABASES)("a protected label falls back only to a protected one ($name)", (database) => {
  const t = useTestApp(database);
  let owner: Browser;
  let base = "";

  beforeEach(async () => {
    owner = await member(t, "owner");
    base = `/api/dashboard/projects/${t.project.projectId}`;
  });

  const put = (name: string, body: Record<string, unknown>) => owner.call("PUT", `${base}/labels/${name}`, { body });
  const settings = async () =>
    Object.fromEntries(
      (await owner.call("GET", `${base}/labels`)).body.data.labels
        .filter((l: { updated_at: string }) => l.updated_at !== "")
        .map((l: { name: string; protected: boolean; fallback: string | null }) => [l.name, [l.protected, l.fallback]]),
    );
  const refused = async (name: string, body: Record<string, unknown>, error: string) => {
    const before = await settings();
    const res = await put(name, body);
    expect([res.status, res.body.error]).toEqual([409, error]);
    expect(await settings()).toEqual(before);
  };

  it("protecting a label whose fallback is unprotected, in the dashboard", async () => {
    expect((await put("staging", { fallback: "production" })).status).toBe(200);
    await refused("staging", { protected: true }, PROTECT_FIRST);
    await refused("staging", { protected: true, description: "QA" }, PROTECT_FIRST);
  });

  it("giving a protected label an unprotected fallback, alone or with protection in one request", async () => {
    await refused("staging", { protected: true, fallback: "production" }, FALLBACK_UNPROTECTED);
    expect((await put("staging", { protected: true })).status).toBe(200);
    await refused("staging", { fallback: "production" }, FALLBACK_UNPROTECTED);
    // A fallback to a label nothing configured is a fallback to an unprotected one.
    await refused("staging", { fallback: "qa" }, FALLBACK_UNPROTECTED.replaceAll("production", "qa"));
  });

  it("unprotecting a label a protected one falls back to; allowed once nothing protected leans on it", async () => {
    expect((await put("production", { protected: true })).status).toBe(200);
    const both = await put("staging", { protected: true, fallback: "production" });
    expect(both.body.data).toMatchObject({ name: "staging", protected: true, fallback: "production" });
    await refused("production", { protected: false }, STAYS_PROTECTED);
    // A protected chain is fine to loosen from the top: staging unprotected may keep its fallback.
    expect((await put("staging", { protected: false })).body.data).toMatchObject({ protected: false });
    expect((await put("production", { protected: false })).body.data).toMatchObject({ protected: false });
    expect(await settings()).toEqual({ production: [false, null], staging: [false, "production"] });
  });

  it("a protect and an unprotect racing never leave a protected label on an unprotected fallback", async () => {
    const caller = (role: "owner", actor: string): Caller => ({
      projectId: t.project.projectId,
      projectName: "p",
      orgId: t.project.orgId,
      plan: "free",
      actor,
      access: "publish",
      role,
    });
    const a = caller("owner", "user:a@example.com");
    const b = caller("owner", "user:b@example.com");
    for (let round = 0; round < 5; round++) {
      await t.app.prompts.configureLabel(a, "staging", { protected: false, fallback: null });
      await t.app.prompts.configureLabel(a, "production", { protected: true });
      await Promise.allSettled([
        t.app.prompts.configureLabel(a, "staging", { protected: true, fallback: "production" }),
        t.app.prompts.configureLabel(b, "production", { protected: false }),
      ]);
      const now = await settings();
      const leans = now.staging?.[0] === true && now.staging?.[1] === "production";
      expect(leans && now.production?.[0] === false).toBe(false);
    }
  });
});

describe.each(DATABASES)("the operator's label set keeps the rule ($name)", (database) => {
  it("refuses each configuration with the same message, and changes nothing", async () => {
    const { url, drop } = await database.create();
    try {
      const org = await cliJson(url, ["org", "create", "acme"]);
      const { project } = await cliJson(url, ["project", "create", org.id, "web"]);
      await cliJson(url, ["label", "set", project.id, "staging", "--fallback", "production"]);
      const protect = await cli(url, ["label", "set", project.id, "staging", "--protected"]);
      expect([protect.code, protect.stderr]).toEqual([1, `error: ${PROTECT_FIRST}\n`]);
      const both = await cli(url, ["label", "set", project.id, "qa", "--protected", "--fallback", "staging"]);
      expect([both.code, both.stderr]).toEqual([
        1,
        `error: ${FALLBACK_UNPROTECTED.replaceAll("staging", "qa").replaceAll("production", "staging")}\n`,
      ]);
      await cliJson(url, ["label", "set", project.id, "production", "--protected"]);
      await cliJson(url, ["label", "set", project.id, "staging", "--protected"]);
      const unprotect = await cli(url, ["label", "set", project.id, "production", "--no-protected"]);
      expect([unprotect.code, unprotect.stderr]).toEqual([1, `error: ${STAYS_PROTECTED}\n`]);
      const listed = await cliJson(url, ["label", "list", project.id]);
      expect(listed.labels.map((l: { name: string; protected: boolean; fallback: string | null }) => l)).toEqual([
        expect.objectContaining({ name: "production", protected: true, fallback: null }),
        expect.objectContaining({ name: "staging", protected: true, fallback: "production" }),
      ]);
    } finally {
      await drop();
    }
  });
});
