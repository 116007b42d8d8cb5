import type { Handler } from "./args.js";
import { describeImport, exportBundle, importBundle } from "./git/bundle.js";
import { check, describeCheck } from "./git/check.js";
import type { RemoteOptions } from "./git/connection.js";
import { describeDatasetDifferences } from "./git/datasets.js";
import { describeDiff, diff } from "./git/diff.js";
import { describeEval, type EvalOptions, evaluate } from "./git/eval.js";
import { describeIncludeDifferences } from "./git/pins.js";
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
    const report = await pull(dir as string, opts);
    // `datasets` only when there are any: a project without them answers what it always did.
    const data = report.datasets.length > 0 ? report : { prompts: report.prompts };
    emit(!!opts.json, data, () => describePull(report));
  },

  async status([dir], opts: RemoteOptions & { offline?: boolean }) {
    const report = await status(dir as string, opts);
    const data = report.datasets.length > 0 ? report : { prompts: report.prompts };
    emit(!!opts.json, data, () => describeStatus(report));
  },

  async diff([dir], opts: RemoteOptions) {
    const diffs = await diff(dir as string, opts);
    // NO_COLOR (no-color.org): a terminal whose user asked for plain text gets it.
    const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
    emit(!!opts.json, { prompts: diffs }, () => describeDiff(diffs, colour));
  },

  async push([dir], opts: RemoteOptions & { publish?: boolean | string; message?: string; force?: boolean }) {
    const report = await push(dir as string, opts);
    const data = report.datasets.length > 0 ? report : { prompts: report.prompts };
    emit(!!opts.json, data, () => describePush(report));
  },

  async check([dir], opts: RemoteOptions & { label?: string; includes?: boolean }) {
    const label = opts.label ?? "production";
    const { differences, datasets, includes } = await check(dir as string, opts, label);
    const ok = differences.length === 0 && (datasets?.length ?? 0) === 0 && (includes?.length ?? 0) === 0;
    emit(!!opts.json, { ok, differences, ...(datasets ? { datasets } : {}), ...(includes ? { includes } : {}) }, () => {
      const lines: string[] = [];
      if (differences.length > 0) lines.push(describeCheck(differences));
      if (datasets && datasets.length > 0) lines.push(describeDatasetDifferences(datasets));
      if (includes && includes.length > 0) lines.push(describeIncludeDifferences(includes));
      if (differences.length === 0) lines.unshift(`${label} matches promptstore.lock`);
      if (datasets?.length === 0) lines.push(`datasets match promptstore.lock`);
      if (includes?.length === 0) lines.push("every include's pin is what its pointer names");
      return lines.join("\n");
    });
    if (differences.length > 0) {
      throw new CliError(`${label} differs from promptstore.lock for ${differences.length} prompt(s)`);
    }
    if (datasets && datasets.length > 0) {
      throw new CliError(`the server's datasets differ from promptstore.lock for ${datasets.length} dataset(s)`);
    }
    if (includes && includes.length > 0) {
      const prompts = [...new Set(includes.map((d) => d.id))];
      throw new CliError(
        `${includes.length} include pin(s) of promptstore.lock behind their pointers, in ${prompts.join(", ")}: promptstore update-includes <prompt>, then pull`,
      );
    }
  },

  async eval([dir], opts: EvalOptions) {
    const report = await evaluate(dir as string, opts);
    emit(!!opts.json, report, () => describeEval(report));
    const failed = report.prompts.filter((p) => !p.ok);
    if (failed.length > 0) {
      throw new CliError(`thresholds failed for ${failed.length} prompt(s): ${failed.map((p) => p.id).join(", ")}`, 1);
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
