import type { Command } from "commander";
import { describeImport, exportBundle, importBundle } from "./git/bundle.js";
import { check, describeCheck } from "./git/check.js";
import { type RemoteOptions, remoteOptions } from "./git/connection.js";
import { describeDiff, diff } from "./git/diff.js";
import { describePull, pull } from "./git/pull.js";
import { describePush, push } from "./git/push.js";
import { describeStatus, status } from "./git/status.js";
import { CliError, emit } from "./output.js";

/**
 * Prompts in git: a directory of Markdown files and a lockfile, kept in step with any server over HTTP (the
 * client SDK), and bundles that move a project between instances. See docs/git.md.
 */
export function registerGitCommands(program: Command): void {
  remoteOptions(program.command("pull <dir>"))
    .description("write every prompt of the project as a Markdown file in <dir>, and promptstore.lock")
    .option("--force", "overwrite files changed locally even when the server moved too")
    .action(async (dir: string, opts: RemoteOptions & { force?: boolean }) => {
      const results = await pull(dir, opts);
      emit(!!opts.json, { prompts: results }, () => describePull(results));
    });

  remoteOptions(program.command("status <dir>"))
    .description("per file: unchanged, changed locally, changed on the server since the lock, new")
    .option("--offline", "compare files with the lockfile only; do not ask the server")
    .action(async (dir: string, opts: RemoteOptions & { offline?: boolean }) => {
      const rows = await status(dir, opts);
      emit(!!opts.json, { prompts: rows }, () => describeStatus(rows));
    });

  remoteOptions(program.command("diff <dir>"))
    .description("what push would change, section by section (coloured on a terminal, unless NO_COLOR is set)")
    .action(async (dir: string, opts: RemoteOptions) => {
      const diffs = await diff(dir, opts);
      // NO_COLOR (no-color.org): a terminal whose user asked for plain text gets it.
      const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
      emit(!!opts.json, { prompts: diffs }, () => describeDiff(diffs, colour));
    });

  remoteOptions(program.command("push <dir>"))
    .description("save a version for each changed file, create new prompts, update promptstore.lock")
    .option(
      "--publish [label]",
      "also make each pushed file production, or move LABEL to it (a protected label needs a release request)",
    )
    .option("--message <message>", "the change message of every version saved")
    .option("--force", "save even when the prompt moved on the server since the lock")
    .action(
      async (dir: string, opts: RemoteOptions & { publish?: boolean | string; message?: string; force?: boolean }) => {
        const results = await push(dir, opts);
        emit(!!opts.json, { prompts: results }, () => describePush(results));
      },
    );

  remoteOptions(program.command("check <dir>"))
    .description("exit 1 when production (or --label) on the server differs from promptstore.lock (for CI)")
    .option("--label <label>", "compare this label instead of production (docs/releases.md)")
    .action(async (dir: string, opts: RemoteOptions & { label?: string }) => {
      const label = opts.label ?? "production";
      const differences = await check(dir, opts, label);
      emit(!!opts.json, { ok: differences.length === 0, differences }, () =>
        differences.length === 0 ? `${label} matches promptstore.lock` : describeCheck(differences),
      );
      if (differences.length > 0) {
        throw new CliError(`${label} differs from promptstore.lock for ${differences.length} prompt(s)`);
      }
    });

  remoteOptions(program.command("export <file>"))
    .description("write every prompt with all its versions (messages, times, hashes) to a bundle file")
    .action(async (file: string, opts: RemoteOptions) => {
      const summary = await exportBundle(file, opts);
      emit(!!opts.json, summary, () => `exported ${summary.prompts} prompts, ${summary.versions} versions to ${file}`);
    });

  remoteOptions(program.command("import <file>"))
    .description("import a bundle into the key's project; idempotent; production moves only with --publish-as-source")
    .option("--publish-as-source", "point production at what the source's production was")
    .action(async (file: string, opts: RemoteOptions & { publishAsSource?: boolean }) => {
      const results = await importBundle(file, opts);
      emit(!!opts.json, { prompts: results }, () => describeImport(results));
    });
}
