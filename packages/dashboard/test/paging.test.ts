import { describe, expect, it } from "vitest";
import { PAGE_SIZE, pageCount, pageParam, pageValue } from "../src/prompts/paging";

describe("the prompt list's paging", () => {
  it("reads ?page= as a whole page number from 1 to the server's last", () => {
    expect(PAGE_SIZE).toBe(50);
    for (const [raw, page] of [
      [null, 1],
      ["", 1],
      ["x", 1],
      ["0", 1],
      ["-2", 1],
      ["Infinity", 1],
      ["1", 1],
      ["3", 3],
      ["3.7", 3],
      ["2000", 2000],
      ["99999999", 1_000_000],
    ] as const) {
      expect(pageParam(raw), String(raw)).toBe(page);
    }
  });

  it("counts pages from the server's count of matches, one page for none", () => {
    expect([0, 1, 50, 51, 100, 120, 100_000].map((n) => pageCount(n))).toEqual([1, 1, 1, 2, 2, 3, 2000]);
    expect(pageCount(7, 3)).toBe(3);
  });

  it("writes the first page as no ?page= at all", () => {
    expect([0, 1, 2, 17].map(pageValue)).toEqual([null, null, "2", "17"]);
  });
});
