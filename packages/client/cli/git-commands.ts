import type { Handler } from "./args.js";
import { describeImport, exportBundle, importBundle } from "./git/bundle.js";
import { check, describeCheck } from "./git/check.js";
import type { RemoteOptions } from "./git/connection.js";
import { describeDiff, diff } from "./git/diff.js";
import { describePull, pull } from "./git/pull.js";
import { describePush, push } from "./git/push.js";
import { describeStatus, status } from "./git/status.js";
import { CliError, emit } from "./output.js";

/**
 * Prompts in git: a directory of Markdown files and a lockfile, kept in step with any server over HTTP (the
 * client SDK), and bundles that move a project between instances. See docs/git.md.
 */
export const GIT_COMMANDS: Record<string, Handler> = {
  async pull([dir], opts: RemoteOptions & { force?: boolean }) {
    const results = await pull(dir as string, opts);
    emit(!!opts.json, { prompts: results }, () => describePull(results));
  },

  async status([dir], opts: RemoteOptions & { offline?: boolean }) {
    const rows = await status(dir as string, opts);
    emit(!!opts.json, { prompts: rows }, () => describeStatus(rows));
  },

  async diff([dir], opts: RemoteOptions) {
    const diffs = await diff(dir as string, opts);
    // NO_COLOR (no-color.org): a terminal whose user asked for plain text gets it.
    const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
    emit(!!opts.json, { prompts: diffs }, () => describeDiff(diffs, colour));
  },

  async push([dir], opts: RemoteOptions & { publish?: boolean | string; message?: string; force?: boolean }) {
    const results = await push(dir as string, opts);
    emit(!!opts.json, { prompts: results }, () => describePush(results));
  },

  async check([dir], opts: RemoteOptions & { label?: string }) {
    const label = opts.label ?? "production";
    const differences = await check(dir as string, opts, label);
    emit(!!opts.json, { ok: differences.length === 0, differences }, () =>
      differences.length === 0 ? `${label} matches promptstore.lock` : describeCheck(differences),
    );
    if (differences.length > 0) {
      throw new CliError(`${label} differs from promptstore.lock for ${differences.length} prompt(s)`);
    }
  },

  async export([file], opts: RemoteOptions) {
    const summary = await exportBundle(file as string, opts);
    emit(!!opts.json, summary, () => `exported ${summary.prompts} prompts, ${summary.versions} versions to ${file}`);
  },

  async import([file], opts: RemoteOptions & { publishAsSource?: boolean }) {
    const results = await importBundle(file as string, opts);
    emit(!!opts.json, { prompts: results }, () => describeImport(results));
  },
};
