import { readFileSync } from "node:fs";
import { type Handler, type OptionSpec, parseArgs } from "./args.js";
import { CliError } from "./output.js";

/**
 * `promptstore`, as the client package installs it (issue 35): every command that speaks to a server over
 * HTTP with an API key, so that it runs where prompts live, in a team's own repository, with nothing but
 * Node.js. The server's binary hands these same commands to this code; the operator's commands (`serve`,
 * `org`, `user`, `backup`, …) stay with the server. Each command's code loads only when it runs: `--help`
 * reads this file alone.
 */
export interface CommandSpec {
  /** One word, or two for a group (`label move`). */
  name: string;
  /** `<dir>`, `[version]`: shown in the help; the `<…>` ones are required. */
  args: string[];
  summary: string;
  options: Record<string, OptionSpec>;
  run: () => Promise<Handler>;
  /** The exit code of a failure (a usage mistake, a refusal, a server error): 1 unless the command says. */
  failureExit?: number;
  /** More help, after the options. */
  details?: string;
}

const REMOTE: Record<string, OptionSpec> = {
  url: { kind: "string", value: "url", help: "the server (default: $PROMPTSTORE_URL)" },
  key: { kind: "string", value: "key", help: "the project's API key (default: $PROMPTSTORE_API_KEY)" },
  json: { kind: "boolean", help: "machine-readable output" },
};

const git = (name: string) => async () => (await import("./git-commands.js")).GIT_COMMANDS[name] as Handler;
const labels = (name: string) => async () => (await import("./label-commands.js")).LABEL_COMMANDS[name] as Handler;
const includes = async () => (await import("./include-commands.js")).INCLUDE_COMMANDS.update as Handler;
const datasets = (name: string) => async () =>
  (await import("./dataset-commands.js")).DATASET_COMMANDS[name] as Handler;

export const COMMANDS: CommandSpec[] = [
  {
    name: "pull",
    args: ["<dir>"],
    summary:
      "write every prompt of the project as a Markdown file in <dir>, each dataset as <dir>/datasets/<name>.jsonl, and promptstore.lock",
    options: { force: { kind: "boolean", help: "overwrite files changed locally even when the server moved too" } },
    run: git("pull"),
  },
  {
    name: "status",
    args: ["<dir>"],
    summary: "per file: unchanged, changed locally, changed on the server since the lock, new",
    options: { offline: { kind: "boolean", help: "compare files with the lockfile only; do not ask the server" } },
    run: git("status"),
  },
  {
    name: "diff",
    args: ["<dir>"],
    summary: "what push would change, section by section (coloured on a terminal, unless NO_COLOR is set)",
    options: {},
    run: git("diff"),
  },
  {
    name: "push",
    args: ["<dir>"],
    summary: "save a version for each changed file (prompts and datasets), create new ones, update promptstore.lock",
    options: {
      publish: {
        kind: "optional",
        value: "label",
        help: "also make each pushed file production, or move LABEL to it (a protected label needs a release request)",
      },
      message: { kind: "string", value: "message", help: "the change message of every version saved" },
      force: { kind: "boolean", help: "save even when the prompt moved on the server since the lock" },
    },
    run: git("push"),
  },
  {
    name: "check",
    args: ["<dir>"],
    summary: "exit 1 when production (or --label) on the server differs from promptstore.lock (for CI)",
    options: {
      label: { kind: "string", value: "label", help: "compare this label instead of production" },
      includes: {
        kind: "boolean",
        help: "also exit 1 when an include's pin in promptstore.lock is behind the label it follows (docs/includes.md)",
      },
    },
    run: git("check"),
  },
  {
    name: "eval",
    args: ["<dir>"],
    summary:
      "evaluate each prompt file that differs from production (or --against) on the server; exit 0 when every threshold holds, 1 when one fails, 2 on a usage or server error",
    options: {
      prompt: { kind: "string", value: "id", help: "only this prompt" },
      against: {
        kind: "string",
        value: "ref",
        help: "compare with production (default), another label, latest, or a version hash (with --prompt)",
      },
      junit: {
        kind: "string",
        value: "file",
        help: "also write JUnit XML: one test case per dataset case of each draft",
      },
      dataset: { kind: "string", value: "dataset", help: "a dataset's name or id (ds_…, optionally @version)" },
      checks: {
        kind: "string",
        value: "file",
        help: 'a JSON file holding the check set ([{ "type": "contains", … }])',
      },
      connection: { kind: "string", value: "id", help: "the model connection to run on (con_…)" },
      model: { kind: "string", value: "name", help: "run on this model instead of each version's own" },
      concurrency: {
        kind: "string",
        value: "n",
        help: "model calls at once per evaluation, 1-32 (the server's default: 4)",
      },
      "min-pass-rate": {
        kind: "string",
        value: "rate",
        help: "pass when at least this share of cases passes (0 to 1), instead of every case",
      },
    },
    run: git("eval"),
    failureExit: 2,
    details: `The settings: when --against names a label with a required evaluation, that requirement (its dataset,
checks, connection, model and thresholds; these flags are then ignored). Otherwise --dataset, --checks and
--connection, each defaulting to the prompt's saved defaults (dataset and checks) where the server has them.

Thresholds: a requirement's (its least pass rate, per check, no regression); otherwise every case of the
draft passes, or --min-pass-rate. A prompt file equal to the version it is compared with is not evaluated;
the same content evaluated again is answered by the server from what it kept (no model call). A read key
reads; evaluating needs a write key. See docs/git.md, "Evaluating in CI".`,
  },
  {
    name: "export",
    args: ["<file>"],
    summary: "write every prompt with all its versions (messages, times, hashes) to a bundle file",
    options: {},
    run: git("export"),
  },
  {
    name: "import",
    args: ["<file>"],
    summary: "import a bundle into the key's project; idempotent; production moves only with --publish-as-source",
    options: { "publish-as-source": { kind: "boolean", help: "point production at what the source's production was" } },
    run: git("import"),
  },
  {
    name: "label move",
    args: ["<prompt>", "<label>", "[version]"],
    summary: "point a label at a version (default latest); production is a publish; a protected label is refused",
    options: {
      percent: { kind: "string", value: "n", help: "start or change a gradual rollout of this share (1-100)" },
    },
    run: labels("move"),
  },
  {
    name: "label remove",
    args: ["<prompt>", "<label>"],
    summary: "remove a label (not production) from a prompt",
    options: {},
    run: labels("remove"),
  },
  {
    name: "release request",
    args: ["<prompt>", "<label>", "<version>"],
    summary: "ask for a (protected) label to move to a version; someone else approves it in the dashboard",
    options: {
      percent: { kind: "string", value: "n", help: "ask for a gradual rollout of this share (1-99) instead" },
      message: { kind: "string", value: "text", help: "why, for whoever approves it" },
    },
    run: labels("request"),
  },
  {
    name: "release list",
    args: [],
    summary: "the project's release requests, newest first",
    options: { status: { kind: "string", value: "status", help: "only these: pending, approved, rejected, stale" } },
    run: labels("list"),
  },
  {
    name: "release show",
    args: ["<id>"],
    summary: "one release request",
    options: {},
    run: labels("show"),
  },
  {
    name: "update-includes",
    args: ["[prompt]"],
    summary:
      "save <prompt> again with its includes pinned to what they name now, or (--from <piece>) each prompt that includes the piece; publish where allowed with --publish",
    options: {
      from: { kind: "string", value: "piece", help: "update the prompts that include this prompt instead" },
      only: { kind: "string", value: "a,b", help: "with <prompt>: only the includes of these prompts" },
      prompts: {
        kind: "string",
        value: "a,b",
        help: "with --from: only these including prompts (default: every one behind)",
      },
      label: {
        kind: "string",
        value: "label",
        help: "the label whose version is updated and published (default production)",
      },
      version: {
        kind: "string",
        value: "version",
        help: "with <prompt>: start from this version (latest, a hash or prefix)",
      },
      publish: {
        kind: "boolean",
        help: "also move the label to the new version (a protected label gets a release request; a gate must pass)",
      },
      message: { kind: "string", value: "message", help: "the new versions' change note" },
    },
    run: includes,
    details: `Prints per prompt what moved and what happened: support: safety 3f2a9c1b2c3d → 9b8c7d6e5f4a, saved
1a2b3c4d5e6f, published. Exits 1 when the server refuses a prompt (its words are printed), or when --publish
was held back by the label's required evaluation (the version is saved; run the evaluation, then update
again). Saving needs a write key; publishing, a publish key. See docs/includes.md, "Updating on purpose".`,
  },
  {
    name: "datasets list",
    args: [],
    summary: "the project's datasets of test cases: id, head version, cases, name",
    options: {},
    run: datasets("list"),
  },
  {
    name: "datasets import",
    args: ["<name>", "<file>"],
    summary: "stream a .jsonl or .csv file into a dataset (created when the project has none of that name)",
    options: {
      append: { kind: "boolean", help: "add the file's cases after the dataset's instead of replacing them" },
      message: { kind: "string", value: "text", help: "the new version's change note" },
    },
    run: datasets("import"),
  },
  {
    name: "datasets export",
    args: ["<dataset>"],
    summary: "write a dataset (name or id) as JSONL to stdout, one case a line",
    options: { version: { kind: "string", value: "version", help: "a version's hash or prefix (default: the head)" } },
    run: datasets("export"),
  },
];

/** Every top-level word this package's `promptstore` answers (the server's binary hands these over). */
export const COMMAND_WORDS = [...new Set(COMMANDS.map((c) => c.name.split(" ")[0] as string))];

/** The operator's commands, which only the server's binary has (README.md, "Command line"). */
const SERVER_COMMANDS = [
  "serve",
  "org",
  "project",
  "key",
  "prompt",
  "user",
  "invite",
  "webhook",
  "connection",
  "audit",
  "backup",
  "restore",
  "secret-key",
];

const usage = (c: CommandSpec) => `promptstore ${[c.name, ...c.args].join(" ")} [options]`;

function commandHelp(c: CommandSpec): string {
  const options = { ...c.options, ...REMOTE, help: { kind: "boolean", help: "this help" } as OptionSpec };
  const rows = Object.entries(options).map(([name, o]) => {
    const value = o.kind === "string" ? ` <${o.value}>` : o.kind === "optional" ? ` [${o.value}]` : "";
    return [`--${name}${value}`, o.help];
  });
  const width = Math.max(...rows.map(([left]) => (left as string).length));
  return [
    `Usage: ${usage(c)}`,
    "",
    c.summary,
    "",
    "Options:",
    ...rows.map(([left, right]) => `  ${(left as string).padEnd(width)}  ${right}`),
    ...(c.details ? ["", c.details] : []),
  ].join("\n");
}

function programHelp(): string {
  const rows = COMMANDS.map((c) => [[c.name, ...c.args].join(" "), c.summary]);
  const width = Math.max(...rows.map(([left]) => (left as string).length));
  return [
    "Usage: promptstore <command> [options]",
    "",
    "Prompts in git, labels and releases, and datasets, over HTTP with an API key: --url and --key, or PROMPTSTORE_URL",
    "and PROMPTSTORE_API_KEY. Every command takes --json. Running the server (serve, org, user, backup, …) is",
    "the server's own promptstore command.",
    "",
    "Commands:",
    ...rows.map(([left, right]) => `  ${(left as string).padEnd(width)}  ${right}`),
    "",
    "promptstore <command> --help shows a command's options.",
  ].join("\n");
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** Runs the command line (`argv` as process.argv); returns the exit code instead of exiting. */
export async function main(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  const json = args.includes("--json");
  let command: CommandSpec | undefined;
  try {
    const [first, second] = args;
    if (first === undefined || first === "--help" || first === "-h" || first === "help") {
      process.stdout.write(`${programHelp()}\n`);
      return first === undefined ? 1 : 0;
    }
    if (first === "--version" || first === "-V") {
      process.stdout.write(`${version()}\n`);
      return 0;
    }
    command = COMMANDS.find((c) => c.name === `${first} ${second}`) ?? COMMANDS.find((c) => c.name === first);
    if (command === undefined) {
      const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
      if (group.length > 0) {
        throw new CliError(
          `${first} needs one of: ${group.map((c) => c.name.split(" ")[1]).join(", ")} (promptstore --help)`,
        );
      }
      if (SERVER_COMMANDS.includes(first)) {
        throw new CliError(
          `${first} is the server's own command (its promptstore binary); this one speaks to a server over HTTP`,
        );
      }
      throw new CliError(`unknown command ${first} (promptstore --help lists them)`);
    }
    const rest = args.slice(command.name.split(" ").length);
    if (rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(`${commandHelp(command)}\n`);
      return 0;
    }
    const required = command.args.filter((a) => a.startsWith("<")).length;
    const { positionals, options } = parseArgs(rest, { ...command.options, ...REMOTE }, required);
    if (positionals.length < required || positionals.length > command.args.length) {
      throw new CliError(`usage: ${usage(command)}`);
    }
    await (await command.run())(positionals, options);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `error: ${message}\n`);
    if (error instanceof CliError && error.exitCode !== undefined) return error.exitCode;
    return command?.failureExit ?? 1;
  }
}
