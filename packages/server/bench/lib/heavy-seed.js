// A large store built fast: one prompt made through the real service (hash, documents, sections), then its
// rows copied through the store's own connection under new ids, a page at a time. Events and audit rows are
// left out: no heavy job reads them.

import { openStore } from "../../dist/index.js";
import { seed } from "./seed.js";

/** Five sections of about 2 KB: a ~10 KB system prompt, as the measurements had. */
export function tenKbSections(n = 0) {
  const para = `You handle this part of the job for {{ company }}, precisely and briefly, in {{ language }}. `.repeat(
    22,
  );
  return ["Role", "Policies", "Tone", "Tools", "Output Format"].map((title, i) => ({
    title,
    content: `${para}(${title}, part ${i + 1}, revision ${n})`,
  }));
}

const TABLES = [
  ["prompts", "id"],
  ["versions", "prompt_id"],
  ["version_sections", "prompt_id"],
  ["version_tools", "prompt_id"],
  ["prompt_labels", "prompt_id"],
];

export async function seedLarge(databaseUrl, prompts, onProgress) {
  const seeded = await seed(databaseUrl, { prompts: 1, sections: tenKbSections(0) });
  const store = await openStore(databaseUrl);
  try {
    const db = store.db;
    const template = {};
    for (const [table, column] of TABLES) {
      template[table] = await db
        .selectFrom(table)
        .selectAll()
        .where("project_id", "=", seeded.projectId)
        .where(column, "=", seeded.promptId)
        .execute();
    }
    const base = Date.parse(template.prompts[0].created_at);
    const BATCH = 200;
    for (let from = 1; from < prompts; from += BATCH) {
      const to = Math.min(prompts, from + BATCH);
      await db.transaction().execute(async (trx) => {
        for (const [table, column] of TABLES) {
          const rows = [];
          for (let i = from; i < to; i++) {
            const id = `bench-${String(i).padStart(6, "0")}`;
            const at = new Date(base + i).toISOString();
            for (const row of template[table]) {
              const copy = { ...row, [column]: id };
              if (table === "prompts") {
                copy.name = `Bench prompt ${i}`;
                copy.created_at = at;
                copy.updated_at = at;
              }
              rows.push(copy);
            }
          }
          // SQLite binds at most 32 766 values per statement.
          const perRow = Object.keys(template[table][0] ?? { a: 1 }).length;
          const step = Math.max(1, Math.floor(30_000 / perRow));
          for (let i = 0; i < rows.length; i += step)
            await trx
              .insertInto(table)
              .values(rows.slice(i, i + step))
              .execute();
        }
      });
      if (onProgress && Math.floor(to / 10_000) > Math.floor(from / 10_000)) onProgress(to);
    }
    return seeded;
  } finally {
    await store.close();
  }
}
