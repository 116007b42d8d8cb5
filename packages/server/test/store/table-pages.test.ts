import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { unlimitedCaller, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

/**
 * A backup reads each table page by page in its snapshot, by the rows' positions (docs/operations.md). On
 * PostgreSQL the pages walk windows of blocks: rows of 1.8 KB (four a block), and a run of deleted prompts leaves
 * more empty blocks than one window holds, which a page must step over.
 */
describe.each(DATABASES)("a table read page by page in a snapshot ($name)", (database) => {
  const t = useTestApp(database);

  it("yields every row once, in pages of at most the limit, across empty stretches of the table", async () => {
    const caller = await unlimitedCaller(t);
    for (let n = 0; n < 240; n++) {
      await t.app.prompts.create(caller, {
        id: `p-${String(n).padStart(3, "0")}`,
        name: `P ${n}`,
        // Random text under the size PostgreSQL moves out of line (2 KB): rows it cannot compress, four a block.
        sections: [{ title: "Body", content: `${n} ${randomBytes(1300).toString("base64")}` }],
      });
    }
    for (let n = 20; n < 220; n++) await t.app.prompts.delete(caller, `p-${String(n).padStart(3, "0")}`);
    const kept = (
      await t.store.db.selectFrom("version_sections").select("prompt_id").orderBy("prompt_id").execute()
    ).map((r) => r.prompt_id);
    expect(kept).toHaveLength(40);

    const pages: string[][] = [];
    await t.store.operations.snapshot(t.store.db, async (trx) => {
      let after: string | undefined;
      for (;;) {
        const page = await t.store.operations.tablePage(trx, "version_sections", after, 8);
        if (page.rows.length === 0) break;
        pages.push(page.rows.map((r) => String(r.prompt_id)));
        after = page.last;
      }
    });
    expect(pages.every((p) => p.length <= 8)).toBe(true);
    expect(pages.flat().sort()).toEqual(kept);
  });
});
