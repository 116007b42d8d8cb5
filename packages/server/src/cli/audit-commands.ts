import type { AuditEntry } from "@promptstore/core/audit";
import { auditQuery } from "@promptstore/core/audit";
import { readableRef } from "@promptstore/core/version-ref";
import type { Command } from "commander";
import { AuditService } from "../service/audit-service.js";
import { CliError, emit } from "./output.js";
import { withPrompts } from "./prompt-commands.js";

const short = (pointer: string | null) => (pointer === null ? "-" : readableRef(pointer));

const line = (e: AuditEntry) =>
  `${e.at}  ${e.action.padEnd(16)}  ${e.target}  ${short(e.before)} -> ${short(e.after)}  by ${e.actor}`;

/** `promptstore audit <project>`: the project's audit trail, newest first, as the API pages it. */
export function registerAuditCommand(program: Command): void {
  program
    .command("audit <project>")
    .description("show a project's audit trail, newest first (project: id or unique name)")
    .option("--limit <n>", "entries per page, 1-100", "50")
    .option("--cursor <cursor>", "next_cursor of the previous page")
    .option("--json", "machine-readable output")
    .action(async (projectRef: string, opts: { limit: string; cursor?: string; json?: boolean }) => {
      const parsed = auditQuery.safeParse({ limit: opts.limit, cursor: opts.cursor });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new CliError(`${String(issue?.path[0] ?? "limit")}: ${issue?.message}`);
      }
      const page = await withPrompts(projectRef, (_prompts, caller, store) =>
        new AuditService(store.db).list(caller, parsed.data),
      );
      emit(!!opts.json, page, () => {
        const lines = page.entries.length === 0 ? ["no entries"] : page.entries.map(line);
        if (page.next_cursor) lines.push(`more: --cursor ${page.next_cursor}`);
        return lines.join("\n");
      });
    });
}
