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
}

const REMOTE: Record<string, OptionSpec> = {
  url: { kind: "string", value: "url", help: "the server (default: $PROMPTSTORE_URL)" },
  key: { kind: "string", value: "key", help: "the project's API key (default: $PROMPTSTORE_API_KEY)" },
  json: { kind: "boolean", help: "machine-readable output" },
};

const git = (name: string) => async () => (await import("./git-commands.js")).GIT_COMMANDS[name] as Handler;
const labels = (name: string) => async () => (await import("./label-commands.js")).LABEL_COMMANDS[name] as Handler;

export const COMMANDS: CommandSpec[] = [
  {
    name: "pull",
    args: ["<dir>"],
    summary: "write every prompt of the project as a Markdown file in <dir>, and promptstore.lock",
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
    summary: "save a version for each changed file, create new prompts, update promptstore.lock",
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
    options: { label: { kind: "string", value: "label", help: "compare this label instead of production" } },
    run: git("check"),
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
  ].join("\n");
}

function programHelp(): string {
  const rows = COMMANDS.map((c) => [[c.name, ...c.args].join(" "), c.summary]);
  const width = Math.max(...rows.map(([left]) => (left as string).length));
  return [
    "Usage: promptstore <command> [options]",
    "",
    "Prompts in git, and labels and releases, over HTTP with an API key: --url and --key, or PROMPTSTORE_URL",
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
    const command = COMMANDS.find((c) => c.name === `${first} ${second}`) ?? COMMANDS.find((c) => c.name === first);
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
    return 1;
  }
}
