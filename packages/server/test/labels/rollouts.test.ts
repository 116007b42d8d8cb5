/**
 * docs/releases.md, "Gradual rollouts": publishing with a percent starts or changes a rollout; the same
 * assign value always gets the same arm (the documented function); the candidate at 100 (or without a
 * percent) completes it, the current version again aborts it.
 */
import { rolloutArm } from "@promptstore/core/labels";
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("rollouts ($name)", (database) => {
  const t = useTestApp(database);
  let current = "";
  let candidate = "";
  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    current = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    candidate = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
  });

  const read = async (assign: string, version = "production") =>
    (await t.request("GET", `/api/v2/prompts/bot?version=${version}&assign=${encodeURIComponent(assign)}`)).body.data;

  it("a read gets the arm the documented function gives its assign value, always the same, with rollout", async () => {
    const started = await t.request("POST", "/api/v2/prompts/bot/publish", {
      body: { version: candidate, percent: 30 },
    });
    expect(started.body.data).toEqual({
      id: "bot",
      version: candidate,
      published: true,
      label: "production",
      rollout: { candidate, percent: 30 },
    });
    for (const assign of ["user-1", "user-2", "user-3", "tenant:acme", "ünïcødé"]) {
      const arm = rolloutArm("bot", "production", assign, 30);
      const first = await read(assign);
      expect(first.version).toBe(arm === "candidate" ? candidate : current);
      expect(first.rollout).toEqual({ candidate, percent: 30, arm });
      // production_version stays what production serves to the others.
      expect(first.production_version).toBe(current);
      expect((await read(assign)).version).toBe(first.version);
    }
  });

  it("over 10 000 assign values the candidate's share is within 2 points of the percent", async () => {
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent: 10 } });
    let onCandidate = 0;
    for (let i = 0; i < 10_000; i++) {
      const data = await read(`user-${i}`);
      const expected = rolloutArm("bot", "production", `user-${i}`, 10);
      expect(data.rollout.arm).toBe(expected);
      if (data.version === candidate) onCandidate++;
    }
    expect(Math.abs(onCandidate / 100 - 10)).toBeLessThanOrEqual(2);
  });

  it("raising the percent keeps every reader already on the candidate there", async () => {
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent: 10 } });
    const before = new Map<string, string>();
    for (let i = 0; i < 300; i++) before.set(`u${i}`, (await read(`u${i}`)).version);
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent: 50 } });
    for (const [assign, version] of before) {
      if (version === candidate) expect((await read(assign)).version).toBe(candidate);
    }
  });

  it("the candidate at 100 completes the rollout; the current version again aborts it", async () => {
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent: 20 } });
    const aborted = await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: current } });
    expect(aborted.body.data).toEqual({ id: "bot", version: current, published: true, label: "production" });
    for (let i = 0; i < 50; i++) {
      const data = await read(`user-${i}`);
      expect(data.version).toBe(current);
      expect(data.rollout).toBeUndefined();
    }
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent: 20 } });
    const completed = await t.request("POST", "/api/v2/prompts/bot/publish", {
      body: { version: candidate, percent: 100 },
    });
    expect(completed.body.data).toEqual({ id: "bot", version: candidate, published: true, label: "production" });
    const data = await read("user-1");
    expect(data.version).toBe(candidate);
    expect(data.production_version).toBe(candidate);
    expect(data.rollout).toBeUndefined();
  });

  it("a rollout on another label; refused on a label that is not set, naming percent", async () => {
    const refused = await t.request("POST", "/api/v2/prompts/bot/publish", {
      body: { version: candidate, label: "staging", percent: 10 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("percent: staging is not set on prompt bot; move it there before rolling out");
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: current, label: "staging" } });
    await t.request("POST", "/api/v2/prompts/bot/publish", {
      body: { version: candidate, label: "staging", percent: 50 },
    });
    const arm = rolloutArm("bot", "staging", "user-7", 50);
    const data = await read("user-7", "staging");
    expect(data.label).toBe("staging");
    expect(data.rollout).toEqual({ candidate, percent: 50, arm });
    // Production is untouched by staging's rollout.
    const production = await read("user-7");
    expect(production.version).toBe(current);
    expect(production.rollout).toBeUndefined();
  });

  it("a rollout changed while reads run: every read answers one of the two versions, as its arm says", async () => {
    let running = true;
    const answers: { status: number; version: string; arm?: string }[] = [];
    const readers = Array.from({ length: 4 }, async (_, r) => {
      for (let i = 0; running; i++) {
        const res = await t.request("GET", `/api/v2/prompts/bot?assign=r${r}-${i % 50}`);
        answers.push({ status: res.status, version: res.body.data?.version, arm: res.body.data?.rollout?.arm });
        // A cached read through inject settles in microtasks alone: let the publishes have their turn.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    for (const percent of [10, 50, 90, 30, 100]) {
      await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent } });
    }
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: current } });
    running = false;
    await Promise.all(readers);
    expect(answers.length).toBeGreaterThan(20);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      // The arm and the version agree: no read mixes one rollout state's arm with another's version.
      if (answer.arm === "candidate") expect(answer.version).toBe(candidate);
      if (answer.arm === "current") expect(answer.version).toBe(current);
      expect([current, candidate]).toContain(answer.version);
    }
    // After the last publish (current, at 100: completed onto current), every read serves current.
    expect((await read("anyone")).version).toBe(current);
  });

  it("/metrics counts reads per label and arm", async () => {
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: current, label: "staging" } });
    await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent: 50 } });
    const arms = { current: 0, candidate: 0 };
    for (let i = 0; i < 40; i++) arms[(await read(`m${i}`)).rollout.arm as "current" | "candidate"]++;
    for (let i = 0; i < 3; i++) await read("x", "staging");
    await t.request("GET", `/api/v2/prompts/bot?version=${current}`);
    const text = (await t.request("GET", "/metrics", { key: null })).body as string;
    const sample = (label: string, arm: string) =>
      Number(
        text
          .split("\n")
          .find((l) => l.startsWith(`promptstore_prompt_reads_total{label="${label}",arm="${arm}"}`))
          ?.split(" ")
          .pop() ?? 0,
      );
    expect(sample("production", "current")).toBe(arms.current);
    expect(sample("production", "candidate")).toBe(arms.candidate);
    // A label's name is a tenant's word: counted as `label`, never named.
    expect(sample("label", "none")).toBe(3);
    expect(sample("staging", "none")).toBe(0);
    expect(text).not.toContain("staging");
    expect(sample("version", "none")).toBe(1);
  });

  it("/metrics says nothing of any tenant: no label name, prompt id or project, after reads of many labels", async () => {
    const names = Array.from({ length: 5 }, (_, i) => `acme-secret-env-${i}`);
    for (const label of names) {
      await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: current, label } });
      await read("x", label);
    }
    const text = (await t.request("GET", "/metrics", { key: null })).body as string;
    expect(text).not.toContain("acme-secret-env");
    expect(text).not.toContain(t.project.projectId);
    expect(text).not.toMatch(/"bot"/);
    const series = text.split("\n").filter((l) => l.startsWith("promptstore_prompt_reads_total{"));
    for (const line of series)
      expect(line).toMatch(
        /^promptstore_prompt_reads_total\{label="(production|latest|label|version)",arm="(none|current|candidate)"\} \d+$/,
      );
    expect(series.find((l) => l.startsWith('promptstore_prompt_reads_total{label="label",arm="none"}'))).toBe(
      'promptstore_prompt_reads_total{label="label",arm="none"} 5',
    );
  });

  it("a percent out of range is a 400 naming percent", async () => {
    for (const percent of [0, 101, 12.5, "10"]) {
      const res = await t.request("POST", "/api/v2/prompts/bot/publish", { body: { version: candidate, percent } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("percent: must be a whole number from 1 to 100");
    }
  });
});
