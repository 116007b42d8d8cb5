import { resolve } from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../config.js";
import { type BackupSummary, backupStore, RestoreRefused, restoreStore } from "../store/backup.js";
import { DEFAULT_SQLITE_PATH, openStore, storeExists } from "../store/index.js";
import { CliError, emit } from "./output.js";

interface Options {
  json?: boolean;
  force?: boolean;
}

const total = (summary: BackupSummary) => Object.values(summary.tables).reduce((a, b) => a + b, 0);

/** `backup` and `restore`: the whole store to and from one file, on either database (docs/operations.md). */
export function registerBackupCommands(program: Command): void {
  program
    .command("backup <file>")
    .description("write a consistent copy of the whole store to <file>, while servers keep running")
    .option("--json", "machine-readable output")
    .action(async (file: string, opts: Options) => {
      const config = loadConfig();
      // Opening a SQLite path that does not exist would create an empty store and back that up.
      const location = config.DATABASE_URL ?? DEFAULT_SQLITE_PATH;
      if (!storeExists(config.DATABASE_URL)) {
        throw new CliError(`no database at ${location} (set DATABASE_URL)`);
      }
      const store = await openStore(config.DATABASE_URL);
      try {
        const summary = await backupStore(store, resolve(file));
        emit(!!opts.json, summary, () => `backed up ${total(summary)} rows of ${store.location} to ${summary.file}`);
      } finally {
        await store.close();
      }
    });

  program
    .command("restore <file>")
    .description("load a backup into an empty store (--force: replace everything in it)")
    .option("--force", "delete everything in the store first")
    .option("--json", "machine-readable output")
    .action(async (file: string, opts: Options) => {
      const config = loadConfig();
      const store = await openStore(config.DATABASE_URL, {
        invalidationTimeoutMs: config.PROMPTSTORE_INVALIDATION_TIMEOUT_MS,
      });
      try {
        const summary = await restoreStore(store, resolve(file), { force: !!opts.force });
        emit(!!opts.json, summary, () => `restored ${total(summary)} rows from ${summary.file} into ${store.location}`);
      } catch (error) {
        if (error instanceof RestoreRefused) throw new CliError(error.message);
        if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new CliError(`${file}: no such file`);
        throw error;
      } finally {
        await store.close();
      }
    });
}
