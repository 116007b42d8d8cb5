/**
 * Sticky rollout assignment in the client (docs/releases.md): `get(id, { version, assign })` serves the arm
 * the server would, from memory, with both arms held. The client keeps a copy of the assignment function (it
 * may not depend on @promptstore/core at run time): these tests pin it to the shared vectors and to core's,
 * and compare its arm with the server's over a thousand assign values.
 */
import { readFileSync } from "node:fs";
import { rolloutBucket as coreBucket, murmur3 as coreMurmur3 } from "@promptstore/core/labels";
import { describe, expect, test } from "vitest";
import { cliJson } from "../../server/test/support/binary.js";
import { type Prompt, type PromptChange, type Promptstore, PromptstoreError } from "../src/index.js";
import { murmur3, otherArmView, rolloutArm, rolloutBucket } from "../src/rollout.js";
import { countingFetch, DATABASES, sections, useFixture, waitFor } from "./support/harness.js";

interface Vector {
  prompt_id: string;
  label: string;
  assign: string;
  bucket: number;
}
const VECTORS = JSON.parse(
  readFileSync(new URL("../../core/test/fixtures/rollout-vectors.json", import.meta.url), "utf8"),
) as Vector[];
const utf8 = new TextEncoder();
const idle = (client: Promptstore) => client.status.stream === "live" && client.status.reading === 0;
const ASSIGNS = Array.from({ length: 1000 }, (_, i) =>
  i % 3 === 0 ? `user-${i}` : i % 3 === 1 ? `tenant:${i * 7919}` : `ü-${i}-🚀`,
);

describe("the client's copy of the assignment function", () => {
  test("the documented test vectors (packages/core/test/fixtures/rollout-vectors.json)", () => {
    expect(VECTORS.length).toBeGreaterThanOrEqual(8);
    for (const v of VECTORS) expect(rolloutBucket(v.prompt_id, v.label, v.assign)).toBe(v.bucket);
  });

  test("murmur3's documented values, and core's murmur3 and bucket on every length and 10 000 values", () => {
    expect(murmur3(utf8.encode(""))).toBe(0);
    expect(murmur3(utf8.encode("hello"))).toBe(0x248bfa47);
    expect(murmur3(utf8.encode("The quick brown fox jumps over the lazy dog"))).toBe(0x2e4ff723);
    for (let n = 0; n < 64; n++) {
      const bytes = utf8.encode("x".repeat(n) + "ü".repeat(n % 5));
      expect(murmur3(bytes, n)).toBe(coreMurmur3(bytes, n));
    }
    for (let i = 0; i < 10_000; i++) {
      const [id, label, assign] = [`prompt-${i % 97}`, i % 2 ? "production" : "eu-canary", `${ASSIGNS[i % 1000]}${i}`];
      expect(rolloutBucket(id, label, assign)).toBe(coreBucket(id, label, assign));
    }
  });

  test("candidate below percent × 100; without an assign value, at random", () => {
    const v = VECTORS[0] as Vector;
    expect(rolloutArm(v.prompt_id, v.label, v.bucket / 100 + 0.01, v.assign)).toBe("candidate");
    expect(rolloutArm(v.prompt_id, v.label, v.bucket / 100, v.assign)).toBe("current");
    const draws = Array.from({ length: 4000 }, () => rolloutArm("p", "production", 25, undefined));
    const share = draws.filter((arm) => arm === "candidate").length / draws.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
  });
});

describe.each(DATABASES)("rollouts in the client ($name)", (database) => {
  const fx = useFixture(database);

  /**
   * A prompt with v1 in production and staging, and v2 rolled out to 30% of production and 60% of staging.
   * Only v2 has model settings, so each arm must carry its own (or none).
   */
  async function rolledOut(url: string) {
    const writer = fx.client({ baseUrl: url, mode: "none" });
    const v1 = await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    await writer.publish("agent", v1.version, { label: "staging" });
    const v2 = await writer.save("agent", { sections: sections("v2"), model: { name: "gpt-4o", temperature: 0.3 } });
    await writer.publish("agent", v2.version, { percent: 30 });
    await writer.publish("agent", v2.version, { label: "staging", percent: 60 });
    return { writer, v1: v1.version, v2: v2.version };
  }

  test("the other arm composed from its pinned read is exactly the server's answer, both ways", async () => {
    const server = await fx.start();
    const { writer, v1, v2 } = await rolledOut(server.url);
    for (const label of ["production", "staging"]) {
      for (const guard of [true, false]) {
        const reads = await Promise.all(
          ASSIGNS.slice(0, 40).map((assign) => writer.get("agent", { version: label, assign, guard })),
        );
        const current = reads.find((r) => r.rollout?.arm === "current") as Prompt;
        const candidate = reads.find((r) => r.rollout?.arm === "candidate") as Prompt;
        expect([current.version, candidate.version]).toEqual([v1, v2]);
        expect([current.model, candidate.model]).toEqual([undefined, { name: "gpt-4o", temperature: 0.3 }]);
        const pinned1 = await writer.get("agent", { version: v1, guard });
        const pinned2 = await writer.get("agent", { version: v2, guard });
        expect(otherArmView(current, pinned2)).toStrictEqual(candidate);
        expect(otherArmView(candidate, pinned1)).toStrictEqual(current);
      }
    }
  });

  test("a thousand assign values: the client's arm is the server's, then served with no request", async () => {
    const server = await fx.start();
    const { writer, v1, v2 } = await rolledOut(server.url);
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, fetch: counter.fetch, ttlMs: 3_600_000 });
    for (const label of ["production", "staging"]) {
      const arms = { current: 0, candidate: 0 };
      for (const assign of ASSIGNS) {
        const [local, remote] = await Promise.all([
          client.get("agent", { version: label, assign }),
          writer.get("agent", { version: label, assign }),
        ]);
        expect(local, `${label} / ${assign}`).toStrictEqual(remote);
        expect(local.version).toBe(local.rollout?.arm === "candidate" ? v2 : v1);
        expect(local.production_version).toBe(v1);
        arms[local.rollout?.arm as "current" | "candidate"]++;
      }
      expect(arms.current).toBeGreaterThan(0);
      expect(arms.candidate).toBeGreaterThan(0);
    }
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    // Both arms held: a thousand new assign values make no request; each gets the same arm every time.
    const before = counter.calls.length;
    for (let i = 0; i < 1000; i++) {
      const assign = `fresh-${i}`;
      const read = await client.get("agent", { assign });
      expect(read.rollout?.arm).toBe(rolloutArm("agent", "production", 30, assign));
      expect(await client.get("agent", { assign })).toBe(read);
      await client.get("agent", { version: "staging", assign });
    }
    // Without assign: at random per call, as the server does.
    const random = Array.from({ length: 2000 }, () => client.get("agent"));
    const share = (await Promise.all(random)).filter((r) => r.version === v2).length / random.length;
    expect(share).toBeGreaterThan(0.24);
    expect(share).toBeLessThan(0.36);
    expect(counter.calls.length).toBe(before);
  });

  test("events keep both arms fresh: a rollout changed, completed or aborted is never served from memory", async () => {
    const server = await fx.start();
    const { writer, v1, v2 } = await rolledOut(server.url);
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000 });
    const served = async (percent: number | null, label = "production") => {
      for (const assign of ASSIGNS.slice(0, 200)) {
        const read = await client.get("agent", { version: label, assign });
        const arm = percent === null ? undefined : rolloutArm("agent", label, percent, assign);
        if (read.rollout?.percent !== (percent ?? undefined)) return false;
        if (read.rollout?.arm !== arm) return false;
        expect(read).toStrictEqual(await writer.get("agent", { version: label, assign }));
      }
      return true;
    };
    expect(await served(30)).toBe(true);
    expect(await served(60, "staging")).toBe(true);
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    await writer.publish("agent", v2, { percent: 80 });
    await waitFor(() => served(80), 10_000, "the new percent to reach the client");
    await writer.publish("agent", v1, { label: "staging" }); // aborted: staging serves v1 to everyone
    await waitFor(() => served(null, "staging"), 10_000, "the abort to reach the client");
    expect((await client.get("agent", { version: "staging", assign: "user-3" })).version).toBe(v1);
    await writer.publish("agent", v2); // completed: production serves v2 to everyone
    await waitFor(() => served(null), 10_000, "the completion to reach the client");
    const done = await client.get("agent", { assign: "user-3" });
    expect([done.version, done.production_version, done.rollout]).toEqual([v2, v2, undefined]);
  });
  test("onChange tells of a rollout's versions, not of the arm each new read of the label happened to get", async () => {
    const server = await fx.start();
    const { v1, v2 } = await rolledOut(server.url);
    const changes: PromptChange[] = [];
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000, onChange: (c) => changes.push(c) });
    await client.get("agent", { assign: "user-1" });
    // Each of this client's writes makes it read production again, and each read gets an arm at random.
    const versions = new Set<string>();
    for (let i = 0; i < 20; i++) {
      await client.publish("agent", v2, { percent: 50 + (i % 2) });
      await client.get("agent");
      // biome-ignore lint/complexity/useLiteralKeys: memory is private; the test looks at which arm is held
      versions.add(client["memory"].peek("agent", "production", true)?.version as string);
    }
    expect(versions).toEqual(new Set([v1, v2])); // both arms were held in turn (20 draws at 50%)
    expect(changes.filter((c) => c.ref === "production")).toHaveLength(1);
    await client.publish("agent", v2); // completed: one change, to v2 (unless v2 was the arm held)
    const after = await client.get("agent");
    expect(after.version).toBe(v2);
    expect(changes.filter((c) => c.ref === "production").length).toBeLessThanOrEqual(2);
  });

  test("while the service cannot be reached, held arms are still served by assign value", async () => {
    const server = await fx.start();
    await rolledOut(server.url);
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000, retries: 0 });
    const served = new Map<string, Prompt>();
    for (const assign of ASSIGNS.slice(0, 200)) served.set(assign, await client.get("agent", { assign }));
    await server.stop("SIGKILL");
    // The client's own write, failed, still marks what it holds of the prompt out of date: the next get asks.
    await expect(client.publish("agent", undefined, { percent: 40 })).rejects.toThrow();
    for (const assign of ASSIGNS.slice(0, 200)) {
      expect(await client.get("agent", { assign })).toStrictEqual(served.get(assign));
    }
  });
  test("a label that falls back to production in a rollout: the arm of production, as the server gives it", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = (await writer.create({ name: "Agent", sections: sections("v1"), publish: true })).version;
    const v2 = (await writer.save("agent", { sections: sections("v2") })).version;
    await writer.publish("agent", v2, { percent: 30 });
    const { project } = await writer.list();
    await cliJson(fx.databaseUrl, ["label", "set", project.id, "staging", "--fallback", "production"]);
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000 });
    const versions = new Set<string>();
    for (const assign of ASSIGNS.slice(0, 300)) {
      const local = await client.get("agent", { version: "staging", assign });
      expect(local).toStrictEqual(await writer.get("agent", { version: "staging", assign }));
      expect([local.label, local.fallback_for, local.rollout?.arm]).toEqual([
        "production",
        "staging",
        rolloutArm("agent", "production", 30, assign),
      ]);
      versions.add(local.version);
    }
    expect(versions).toEqual(new Set([v1, v2]));
  });
  test("an assign value the server refuses is the same 400 from memory; 200 characters of any plane are fine", async () => {
    const server = await fx.start();
    const { writer } = await rolledOut(server.url);
    const client = fx.client({ baseUrl: server.url, ttlMs: 3_600_000 });
    await client.get("agent", { assign: "user-1" });
    for (const assign of ["x".repeat(201), "🚀".repeat(201), "a\u0000b"]) {
      const remote = await writer.get("agent", { assign }).catch((error: PromptstoreError) => error);
      const local = await client.get("agent", { assign }).catch((error: PromptstoreError) => error);
      expect(remote).toBeInstanceOf(PromptstoreError);
      expect(local).toBeInstanceOf(PromptstoreError);
      const [l, r] = [local as PromptstoreError, remote as PromptstoreError];
      expect([l.message, l.status]).toEqual([r.message, r.status]);
    }
    for (const assign of ["x".repeat(200), "🚀".repeat(200), "ünïcødé 🚀", ""]) {
      expect(await client.get("agent", { assign })).toStrictEqual(await writer.get("agent", { assign }));
    }
  });
});
