import { type RawBuilder, sql } from "kysely";
import type { DialectName } from "../dialect-name.js";

/**
 * A read's prompt row also carries its labels and rollouts, as JSON objects built by the database in the
 * same statement (correlated subqueries on their primary keys: nearly free when a prompt has none), so the
 * read path stays one query. `p` is the prompts table's alias. Labels come as `{name: hash}` in name order,
 * rollouts as `{label: [candidate, percent]}`; both `{}` when there are none.
 */
export function labelColumns(dialect: DialectName): { labels: RawBuilder<string>; rollouts: RawBuilder<string> } {
  if (dialect === "postgres") {
    return {
      labels: sql<string>`(select coalesce(json_object_agg(l.name, l.version order by l.name)::text, '{}')
        from prompt_labels l where l.project_id = p.project_id and l.prompt_id = p.id)`,
      rollouts: sql<string>`(select coalesce(json_object_agg(r.label, json_build_array(r.candidate, r.percent))::text, '{}')
        from rollouts r where r.project_id = p.project_id and r.prompt_id = p.id)`,
    };
  }
  // SQLite walks the primary key (project, prompt, name), so the object comes in name order.
  return {
    labels: sql<string>`(select json_group_object(l.name, l.version)
      from prompt_labels l where l.project_id = p.project_id and l.prompt_id = p.id)`,
    rollouts: sql<string>`(select json_group_object(r.label, json_array(r.candidate, r.percent))
      from rollouts r where r.project_id = p.project_id and r.prompt_id = p.id)`,
  };
}
