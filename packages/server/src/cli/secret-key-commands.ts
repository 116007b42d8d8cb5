import type { Command } from "commander";
import { generateSecretKey } from "../secrets/secret-key.js";
import { emit } from "./output.js";

export function registerSecretKeyCommands(program: Command): void {
  const group = program.command("secret-key").description("the server's secret key (PROMPTSTORE_SECRET_KEY)");
  group
    .command("generate")
    .description("print a new random secret key (64 hex characters) for PROMPTSTORE_SECRET_KEY")
    .option("--json", "machine-readable output")
    .action((opts: { json?: boolean }) => {
      const key = generateSecretKey();
      emit(!!opts.json, { key }, () => key);
    });
}
