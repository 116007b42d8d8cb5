// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * What a read of a version returns that depends on the version alone, computed once when it is saved, as
 * JSON: the assembled text without the guard, its variables, its sections (with ids) and its tools.
 * Versions saved before this migration keep nulls here; the application computes and stores their
 * document on their first read, so this migration needs no copy of the assembly rules.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ["text_json", "variables_json", "sections_json", "tools_json"]) {
    await db.schema.alterTable("versions").addColumn(column, "text").execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ["tools_json", "sections_json", "variables_json", "text_json"]) {
    await db.schema.alterTable("versions").dropColumn(column).execute();
  }
}
