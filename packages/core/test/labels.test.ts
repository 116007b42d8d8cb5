import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isLabelRef, labelNameProblem, murmur3, rolloutArm, rolloutBucket } from "../src/labels.js";

const vectors: { prompt_id: string; label: string; assign: string; bucket: number }[] = JSON.parse(
  readFileSync(new URL("./fixtures/rollout-vectors.json", import.meta.url), "utf8"),
);

describe("label names", () => {
  it.each([
    ["staging", undefined],
    ["production", undefined],
    ["eu-west_2", undefined],
    ["z".repeat(32), undefined],
    ["z".repeat(33), "must start with a lowercase letter and hold only a-z, 0-9, _ and -, 32 characters at most"],
    ["Staging", "must start with a lowercase letter and hold only a-z, 0-9, _ and -, 32 characters at most"],
    ["1st", "must start with a lowercase letter and hold only a-z, 0-9, _ and -, 32 characters at most"],
    ["beef", "must not be made only of hexadecimal characters"],
    ["cafe123", "must not be made only of hexadecimal characters"],
    ["latest", "latest is not a label: it always names the newest version"],
  ])("%s: %s", (name, problem) => {
    expect(labelNameProblem(name)).toBe(problem);
    expect(isLabelRef(name)).toBe(problem === undefined);
  });
});

describe("rollout assignment", () => {
  it("murmur3 gives the reference algorithm's values", () => {
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(
      ["", "a", "ab", "abc", "abcd", "hello", "The quick brown fox jumps over the lazy dog"].map((s) =>
        murmur3(bytes(s)).toString(16),
      ),
    ).toEqual(["0", "3c2569b2", "9bbfd75f", "b3dd93fa", "43ed676a", "248bfa47", "2e4ff723"]);
  });

  it("the documented test vectors hold (the clients check the same file)", () => {
    expect(vectors).toHaveLength(8);
    for (const v of vectors) expect(rolloutBucket(v.prompt_id, v.label, v.assign)).toBe(v.bucket);
  });

  it("an arm is the candidate below percent × 100, and stays so as the percent rises", () => {
    const v = vectors[0] as (typeof vectors)[number];
    expect(v.bucket).toBe(5058);
    expect(rolloutArm(v.prompt_id, v.label, v.assign, 50)).toBe("current");
    expect(rolloutArm(v.prompt_id, v.label, v.assign, 51)).toBe("candidate");
    expect(rolloutArm(v.prompt_id, v.label, v.assign, 100)).toBe("candidate");
  });

  it("over 10 000 assign values the candidate's share is within 2 points of the percent", () => {
    for (const percent of [1, 5, 10, 25, 50, 90]) {
      let candidate = 0;
      for (let i = 0; i < 10_000; i++)
        if (rolloutArm("support-bot", "production", `user-${i}`, percent) === "candidate") candidate++;
      expect(Math.abs(candidate / 100 - percent)).toBeLessThanOrEqual(2);
    }
  });
});
