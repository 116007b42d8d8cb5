import { Command, CommanderError } from "commander";
import { DatabaseUnavailable, underlyingMessage } from "../store/faults.js";
import { VERSION } from "../version.js";

type Register = (program: Command) => void;

/**
 * The commands that speak to a server over HTTP with a key: their one home is the client package's
 * `promptstore` (packages/client/cli), which a team installs from /sdk/ where its prompts live (issue 35).
 * This binary hands them over as they are; `label` and `release` stay the operator's here (database, project).
 */
const HTTP_COMMANDS = [
  "pull",
  "status",
  "diff",
  "push",
  "check",
  "eval",
  "export",
  "import",
  "datasets",
  "update-includes",
];

/**
 * Each module of commands, the top-level commands it defines, and how to load it. A command line loads only
 * the module of its command: loading all of them (the HTTP server, the MCP SDK, git, backups) took 1.4 s of
 * a 1.5 s `promptstore org create`, paid by every script and test that runs one. Help and unknown commands
 * load them all, so the help lists everything and commander's suggestions still work.
 */
const MODULES: { commands: string[]; load: () => Promise<Register> }[] = [
  { commands: ["serve"], load: async () => (await import("./serve.js")).registerServeCommand },
  {
    commands: ["org", "project", "key"],
    load: async () => (await import("./accounts/admin-commands.js")).registerAdminCommands,
  },
  { commands: ["prompt"], load: async () => (await import("./prompt-commands.js")).registerPromptCommands },
  { commands: ["label", "release"], load: async () => (await import("./label-commands.js")).registerLabelCommands },
  { commands: ["user"], load: async () => (await import("./accounts/user-commands.js")).registerUserCommands },
  { commands: ["invite"], load: async () => (await import("./accounts/invite-commands.js")).registerInviteCommands },
  { commands: ["webhook"], load: async () => (await import("./webhook-commands.js")).registerWebhookCommands },
  {
    commands: ["connection"],
    load: async () => (await import("./connection-commands.js")).registerConnectionCommands,
  },
  { commands: ["audit"], load: async () => (await import("./audit-commands.js")).registerAuditCommand },
  { commands: ["backup", "restore"], load: async () => (await import("./backup-commands.js")).registerBackupCommands },
  {
    commands: ["secret-key"],
    load: async () => (await import("./secret-key-commands.js")).registerSecretKeyCommands,
  },
];

/** The program with the commands `argv` names (all of them when it names none that is known). */
export async function buildProgram(argv: string[] = []): Promise<Command> {
  const program = new Command("promptstore")
    .description("Promptstore: versioned prompts over HTTP and MCP. DATABASE_URL selects the database.")
    .version(VERSION)
    .exitOverride();
  const named = argv.slice(2).find((arg) => !arg.startsWith("-"));
  const only = MODULES.find((m) => named !== undefined && m.commands.includes(named));
  for (const module of only ? [only] : MODULES) (await module.load())(program);
  if (!only) {
    // Listed in the help; running one goes to the client's code (main, below).
    const { COMMANDS } = await import("@promptstore/client/cli");
    for (const c of COMMANDS.filter((c) => HTTP_COMMANDS.includes(c.name))) {
      program.command([c.name, ...c.args].join(" ")).description(c.summary);
    }
  }
  return program;
}

/** Runs the command line; returns the exit code instead of exiting, so it can be tested in-process. */
export async function main(argv: string[]): Promise<number> {
  const named = argv.slice(2).find((arg) => !arg.startsWith("-"));
  if (named !== undefined && HTTP_COMMANDS.includes(named)) return (await import("@promptstore/client/cli")).main(argv);
  try {
    await (await buildProgram(argv)).parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const json = argv.includes("--json");
    const message =
      error instanceof DatabaseUnavailable
        ? `database unavailable: ${underlyingMessage(error)}`
        : error instanceof Error
          ? error.message
          : String(error);
    process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `error: ${message}\n`);
    return 1;
  }
}
