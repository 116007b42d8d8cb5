import { describe, expect, it } from "vitest";
import {
  formatCount,
  formatSeconds,
  fullDate,
  plural,
  rangeLabel,
  savedByLabel,
  shortHash,
  timeAgo,
} from "../src/ui/format";

const now = Date.parse("2025-06-01T12:00:00Z");
const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();

describe("fullDate", () => {
  it("writes the local date and time out, whatever the machine's locale and zone", () => {
    // Made from local parts, so the expected text holds in any time zone.
    expect(fullDate(new Date(2026, 10, 26, 9, 5, 7).toISOString())).toBe("26 Nov 2026, 09:05:07");
    expect(fullDate(new Date(2025, 0, 1, 0, 0, 0).toISOString())).toBe("1 Jan 2025, 00:00:00");
    expect(fullDate(new Date(1999, 11, 31, 23, 59, 59).toISOString())).toBe("31 Dec 1999, 23:59:59");
    expect(fullDate("not a date")).toBe("not a date");
  });
});

describe("timeAgo", () => {
  it("words each range", () => {
    expect(timeAgo(ago(0), now)).toBe("just now");
    expect(timeAgo(ago(9), now)).toBe("just now");
    expect(timeAgo(ago(10), now)).toBe("10 s ago");
    expect(timeAgo(ago(59), now)).toBe("59 s ago");
    expect(timeAgo(ago(60), now)).toBe("1 min ago");
    expect(timeAgo(ago(3 * 60 + 59), now)).toBe("3 min ago");
    expect(timeAgo(ago(3600), now)).toBe("1 h ago");
    expect(timeAgo(ago(23 * 3600 + 3599), now)).toBe("23 h ago");
    expect(timeAgo(ago(86400), now)).toBe("1 d ago");
    expect(timeAgo(ago(29 * 86400), now)).toBe("29 d ago");
    expect(timeAgo(ago(30 * 86400), now)).toBe("1 mo ago");
    expect(timeAgo(ago(364 * 86400), now)).toBe("12 mo ago");
    expect(timeAgo(ago(365 * 86400), now)).toBe("1 y ago");
    expect(timeAgo(ago(3 * 365 * 86400), now)).toBe("3 y ago");
  });

  it("treats a time slightly ahead as just now, and rejects garbage", () => {
    expect(timeAgo(ago(-30), now)).toBe("just now");
    expect(timeAgo("not a date", now)).toBe("unknown time");
  });
});

describe("small formats", () => {
  it("shortens hashes to 7 characters", () => {
    expect(shortHash("abc1234def567890")).toBe("abc1234");
  });

  it("words page ranges", () => {
    expect(rangeLabel(0, 50, 1000)).toBe("1–50 of 1,000");
    expect(rangeLabel(950, 1000, 1000)).toBe("951–1,000 of 1,000");
    expect(rangeLabel(0, 3, 3)).toBe("1–3 of 3");
    expect(rangeLabel(0, 0, 0)).toBe("0 of 0");
  });

  it("groups counts as en-US does, without making a NumberFormat for whole numbers", () => {
    const intl = new Intl.NumberFormat("en-US");
    const samples = [0, 7, 999, 1000, 1234, 12345, 999999, 1000000, 1234567890, -1, -1000, -987654, 2 ** 53 - 1];
    expect(samples.map(formatCount)).toEqual(samples.map((n) => intl.format(n)));
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(1234.5)).toBe("1,234.5");
  });

  it("says who saved a version", () => {
    expect(savedByLabel("user:ada@example.com")).toBe("ada@example.com");
    expect(savedByLabel("key:ps_abc")).toBe("API key ps_abc…");
    expect(savedByLabel(null)).toBe("not recorded");
  });

  it("pluralises and words seconds", () => {
    expect(plural(1, "prompt")).toBe("1 prompt");
    expect(plural(1200, "prompt")).toBe("1,200 prompts");
    expect(formatSeconds(34)).toBe("34 s");
    expect(formatSeconds(60)).toBe("1 min");
    expect(formatSeconds(65)).toBe("1 min 5 s");
  });
});
