import { readFileSync } from "node:fs";
import { type RequirementBody, requirementBody } from "@promptstore/core/evaluations/requirements";
import { labelNameProblem } from "@promptstore/core/labels";
import { describeZodError, RELEASE_STATUSES } from "@promptstore/core/schemas";
import { shortHash } from "@promptstore/core/version-ref";
import type { Command } from "commander";
import type { Caller } from "../service/access.js";
import { CliError, emit } from "./output.js";
import { withPrompts } from "./prompt-commands.js";

interface SetOptions {
  protected?: boolean;
  fallback?: string;
  description?: string;
  requiredEvaluation?: string;
  rollbackAllowed?: boolean;
  json?: boolean;
}

/** The operator at the command line holds an owner's powers over labels (docs/releases.md). */
const asOperator = (caller: Caller): Caller => ({ ...caller, role: "owner" });

const name = (value: string, what = "label"): string => {
  const problem = labelNameProblem(value);
  if (problem) throw new CliError(`${what}: ${problem}`);
  return value;
};

/** `promptstore label …` and `promptstore release list`: a project's labels, their settings and requests. */
export function registerLabelCommands(program: Command): void {
  const label = program.command("label").description("a project's labels (environments): settings and protection");
  label
    .command("list <project>")
    .description("every label the project uses or has settings for: description, protection, fallback, prompts")
    .option("--json", "machine-readable output")
    .action(async (projectRef: string, opts: { json?: boolean }) => {
      const { labels } = await withPrompts(projectRef, (prompts, caller) => prompts.labelSettings(caller));
      emit(!!opts.json, { labels }, () =>
        labels.length === 0
          ? "no labels"
          : labels
              .map(
                (l) =>
                  `${l.name}${l.protected ? " (protected)" : ""}${l.fallback ? ` → falls back to ${l.fallback}` : ""}` +
                  `  ${l.in_use} prompt(s)${l.description ? `  ${l.description}` : ""}`,
              )
              .join("\n"),
      );
    });
  label
    .command("set <project> <name>")
    .description("set a label's settings: --protected (moves need an approved release), --fallback, --description")
    .option("--protected", "protect the label")
    .option("--no-protected", "unprotect the label")
    .option("--fallback <label>", "serve this label to prompts that lack it ('none' removes the fallback)")
    .option("--description <text>", "what the environment is for")
    .option(
      "--required-evaluation <file>",
      "a JSON file of the evaluation a version must pass before the label points to it (docs/evaluations.md); 'none' removes it",
    )
    .option("--rollback-allowed", "a rollback to a version the label served before passes its required evaluation")
    .option("--no-rollback-allowed", "a rollback needs its evaluation like any other version")
    .option("--json", "machine-readable output")
    .action(async (projectRef: string, labelName: string, opts: SetOptions) => {
      const fallback =
        opts.fallback === undefined ? undefined : opts.fallback === "none" ? null : name(opts.fallback, "fallback");
      const settings = await withPrompts(projectRef, (prompts, caller) =>
        prompts.configureLabel(asOperator(caller), name(labelName), {
          protected: opts.protected,
          fallback,
          description: opts.description,
          required_evaluation: requirementFile(opts.requiredEvaluation),
          rollback_allowed: opts.rollbackAllowed,
        }),
      );
      emit(
        !!opts.json,
        settings,
        () =>
          `${settings.name}: ${settings.protected ? "protected" : "not protected"}, ` +
          `fallback ${settings.fallback ?? "none"}${settings.description ? `, "${settings.description}"` : ""}` +
          (settings.required_evaluation
            ? `, requires an evaluation (pass rate ≥ ${settings.required_evaluation.min_pass_rate})`
            : ""),
      );
    });

  const release = program.command("release").description("a project's release requests");
  release
    .command("request <project> <prompt> <label> <version>")
    .description("ask for a (protected) label to move to a version; an owner approves it in the dashboard")
    .option("--percent <n>", "ask for a gradual rollout of this share (1-99) instead")
    .option("--message <text>", "why, for whoever approves it")
    .option("--json", "machine-readable output")
    .action(
      async (
        projectRef: string,
        promptId: string,
        labelName: string,
        version: string,
        opts: { percent?: string; message?: string; json?: boolean },
      ) => {
        const percent = opts.percent === undefined ? undefined : Number(opts.percent);
        if (percent !== undefined && (!Number.isInteger(percent) || percent < 1 || percent > 100)) {
          throw new CliError("percent: must be a whole number from 1 to 100");
        }
        const asked = await withPrompts(projectRef, (prompts, caller) =>
          prompts.requestRelease(caller, promptId, { label: name(labelName), version, percent, message: opts.message }),
        );
        emit(
          !!opts.json,
          asked,
          () =>
            `${asked.id}  pending: ${asked.prompt_id}:${asked.label} → ${shortHash(asked.version)}; an owner approves it under Releases`,
        );
      },
    );
  release
    .command("list <project>")
    .description("release requests, newest first")
    .option("--status <status>", `only these: ${RELEASE_STATUSES.join(", ")}`)
    .option("--json", "machine-readable output")
    .action(async (projectRef: string, opts: { status?: string; json?: boolean }) => {
      const status = opts.status;
      if (status !== undefined && !(RELEASE_STATUSES as readonly string[]).includes(status)) {
        throw new CliError(`status: must be one of ${RELEASE_STATUSES.join(", ")}`);
      }
      const { releases } = await withPrompts(projectRef, (prompts, caller) =>
        prompts.listReleases(caller, { status: status as (typeof RELEASE_STATUSES)[number] | undefined }),
      );
      emit(!!opts.json, { releases }, () =>
        releases.length === 0
          ? "no release requests"
          : releases
              .map(
                (r) =>
                  `${r.id}  ${r.status}  ${r.prompt_id}:${r.label} → ${shortHash(r.version)}` +
                  `${r.percent === null ? "" : ` at ${r.percent}%`}  by ${r.requested_by}`,
              )
              .join("\n"),
      );
    });
}

/** The required evaluation in a JSON file, checked as the dashboard's body is; `none` removes it. */
function requirementFile(path: string | undefined): RequirementBody | null | undefined {
  if (path === undefined) return undefined;
  if (path === "none") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new CliError(`--required-evaluation: cannot read ${path} as JSON: ${(error as Error).message}`);
  }
  const result = requirementBody.safeParse(parsed);
  if (!result.success)
    throw new CliError(`required_evaluation.${describeZodError(result.error, "required_evaluation")}`);
  return result.data;
}
