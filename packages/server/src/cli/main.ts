import { Command, CommanderError } from "commander";
import { DatabaseUnavailable, underlyingMessage } from "../store/faults.js";
import { VERSION } from "../version.js";
import { registerAdminCommands } from "./admin-commands.js";
import { registerAuditCommand } from "./audit-commands.js";
import { registerBackupCommands } from "./backup-commands.js";
import { registerConnectionCommands } from "./connection-commands.js";
import { registerGitCommands } from "./git-commands.js";
import { registerInviteCommands } from "./invite-commands.js";
import { registerLabelCommands } from "./label-commands.js";
import { registerPromptCommands } from "./prompt-commands.js";
import { registerSecretKeyCommands } from "./secret-key-commands.js";
import { registerServeCommand } from "./serve.js";
import { registerUserCommands } from "./user-commands.js";
import { registerWebhookCommands } from "./webhook-commands.js";

export function buildProgram(): Command {
  const program = new Command("promptstore")
    .description("Promptstore: versioned prompts over HTTP and MCP. DATABASE_URL selects the database.")
    .version(VERSION)
    .exitOverride();
  registerServeCommand(program);
  registerAdminCommands(program);
  registerPromptCommands(program);
  registerLabelCommands(program);
  registerUserCommands(program);
  registerInviteCommands(program);
  registerWebhookCommands(program);
  registerConnectionCommands(program);
  registerAuditCommand(program);
  registerGitCommands(program);
  registerBackupCommands(program);
  registerSecretKeyCommands(program);
  return program;
}

/** Runs the command line; returns the exit code instead of exiting, so it can be tested in-process. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
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
