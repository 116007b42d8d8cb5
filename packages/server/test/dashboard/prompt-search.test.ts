import { matchesSearch } from "@promptstore/core/dashboard";
import { describe, expect, it } from "vitest";
import { searchPage } from "../../src/service/prompts/prompt-pages.js";
import { unlimitedCaller, useTestApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

/** Names a search must find whatever their case, and ids that hold what names do not. */
const NAMES = ["Support Bot", "support triage", "Billing", "SUPPORT escalations", "Ünïcode Helper", "Refunds"];

describe.each(DATABASES)("the dashboard's list, a page at a time and searched ($name)", (database) => {
  const t = useTestApp(database);

  async function seed(count: number) {
    const caller = await unlimitedCaller(t);
    for (let n = 0; n < count; n++) {
      const created = await t.app.prompts.create(caller, {
        // Ids in creation order, as the list is when prompts share a millisecond (created_at, then id).
        id: `p-${String(n).padStart(3, "0")}${n % 5 === 4 ? "-support" : ""}`,
        name: `${NAMES[n % NAMES.length]} ${n}`,
        sections: [{ title: "Role", content: `Prompt ${n} for {{ v${n % 3} }}` }],
        publish: n % 2 === 0,
      });
      if (n % 6 === 1) await t.app.prompts.publish(caller, created.id, created.version, { label: "staging" });
      if (n % 9 === 2) await t.app.prompts.publish(caller, created.id, created.version, { label: "eu-canary" });
    }
    return caller;
  }

  it("every page of every search is the whole list filtered by the screen's rule, across read pieces", async () => {
    const caller = await seed(23);
    const store = t.app.prompts["projectStore"](caller);
    const whole = await t.app.prompts.listWithVariables(caller);
    expect(whole).toHaveLength(23);
    for (const q of ["", "support", "SUPPORT", "ünï", "-support", "nothing like it", "3"]) {
      const expected = whole.filter((p) => matchesSearch(p, q));
      for (const perPage of [1, 4, 10, 100]) {
        const pages = Math.max(1, Math.ceil(expected.length / perPage));
        for (let page = 1; page <= pages + 1; page++) {
          // Pieces of 3 and 7 names: a page's prompts come from several pieces, and matches straddle them; of
          // 23, the whole list in one piece, with nothing after it.
          for (const piece of [3, 7, 23]) {
            const found = await searchPage(store, q, page, perPage, { pieceSize: piece });
            expect(found.total).toBe(23);
            expect(found.matching).toBe(expected.length);
            expect(found.labels).toEqual(["eu-canary", "staging"]);
            expect(found.items).toEqual(expected.slice((page - 1) * perPage, page * perPage));
          }
        }
      }
    }
    // The rule itself: case-insensitive on name or id, nothing else.
    expect(whole.filter((p) => matchesSearch(p, "support")).map((p) => p.id)).toEqual([
      "p-000",
      "p-001",
      "p-003",
      "p-004-support",
      "p-006",
      "p-007",
      "p-009-support",
      "p-012",
      "p-013",
      "p-014-support",
      "p-015",
      "p-018",
      "p-019-support",
      "p-021",
    ]);
  });

  it("a page keeps list order (oldest first) when the ids sort the other way", async () => {
    const caller = await unlimitedCaller(t);
    for (const id of ["zeta", "eta", "delta", "beta", "alpha"]) {
      await t.app.prompts.create(caller, { id, name: `Prompt ${id}`, sections: [{ title: "Role", content: id }] });
      // A new millisecond for each: created_at, not the id, decides their order.
      await new Promise((r) => setTimeout(r, 3));
    }
    const store = t.app.prompts["projectStore"](caller);
    for (const q of ["", "prompt"]) {
      const found = await searchPage(store, q, 1, 10, { pieceSize: 2 });
      expect(found.items.map((p) => p.id)).toEqual(["zeta", "eta", "delta", "beta", "alpha"]);
    }
  });

  it("stops between pieces once nobody waits for the page, searched or not, and reads no further", async () => {
    await seed(23);
    const store = t.app.prompts["projectStore"](await unlimitedCaller(t));
    const gone = new Error("the client left");
    for (const q of ["", "support"]) {
      // A signal that turns aborted at its third look: the reading asks before every piece.
      let looks = 0;
      const signal = {
        throwIfAborted() {
          if (++looks >= 3) throw gone;
        },
      } as AbortSignal;
      await expect(searchPage(store, q, 1, 4, { pieceSize: 3, signal })).rejects.toBe(gone);
      expect(looks, q).toBe(3);
      // Left alone, the same reading takes more pieces than that. Unsearched: the keys at the ends of 7 full
      // pieces and the 8th's absent one, a count of that last piece, the page's ids, the page. Searched: 8
      // pieces of names, the page.
      looks = -100;
      const whole = await searchPage(store, q, 1, 4, { pieceSize: 3, signal });
      expect(whole.total).toBe(23);
      expect(looks + 100, q).toBe(q === "" ? 11 : 9);
    }
  });

  it("answers a page over HTTP with its counts; without parameters the whole list as before; bad input names the field", async () => {
    await seed(12);
    const viewer = await member(t, "viewer");
    const url = promptsUrl(t.project.projectId);
    const page = await viewer.call("GET", `${url}?q=%20Support%20&page=2&per_page=2`);
    expect(page.status).toBe(200);
    const { prompts, ...rest } = page.body.data;
    expect(rest).toEqual({
      project: { id: t.project.projectId, name: expect.any(String) },
      role: "viewer",
      q: "Support",
      page: 2,
      per_page: 2,
      matching: 7,
      total: 12,
      labels: ["eu-canary", "staging"],
    });
    expect(prompts.map((p: { id: string }) => p.id)).toEqual(["p-003", "p-004-support"]);
    expect(Object.keys(prompts[0])).toEqual(Object.keys((await viewer.call("GET", url)).body.data.prompts[0]));

    const whole = await viewer.call("GET", url);
    expect(Object.keys(whole.body.data)).toEqual(["project", "role", "prompts"]);
    expect(whole.body.data.prompts).toHaveLength(12);

    for (const [query, error] of [
      ["per_page=0", "per_page: must be a whole number from 1 to 100"],
      ["per_page=101", "per_page: must be a whole number from 1 to 100"],
      ["page=x", "page: must be a whole number from 1 to 1000000"],
      [`q=${"x".repeat(201)}`, "q: must be at most 200 characters"],
    ] as const) {
      const res = await viewer.call("GET", `${url}?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error });
    }
    // A page past the last is empty, with the counts.
    const past = await viewer.call("GET", `${url}?page=9&per_page=5`);
    expect(past.body.data.prompts).toEqual([]);
    expect([past.body.data.matching, past.body.data.total]).toEqual([12, 12]);
  });
});
