import { resolve } from "node:path";
import type { Command } from "commander";
import { type Config, loadConfig } from "../config.js";
import { resolveSecretKey, SecretKeyError } from "../secrets/secret-key.js";
import { type UnreadableEndpoint, unreadableWebhookSecrets } from "../service/webhooks/webhook-secrets.js";
import { type BackupSummary, backupStore, RestoreRefused, restoreStore } from "../store/backup.js";
import { DEFAULT_SQLITE_PATH, openStore, type Store, storeExists } from "../store/index.js";
import { CliError, emit } from "./output.js";

interface Options {
  json?: boolean;
  force?: boolean;
}

interface SecretCheck {
  /** Endpoints whose signing secret this store's key cannot open: each must be rotated. */
  webhook_secrets_to_rotate: UnreadableEndpoint[];
  /** Set when the key could not be resolved, so nothing could be checked. */
  secret_key_problem?: string;
}

/**
 * Which webhook secrets the key the server will start with cannot open: a backup holds them sealed, and
 * a store restored under another key starts, but cannot sign for those endpoints until they are rotated.
 */
async function checkWebhookSecrets(config: Config, store: Store): Promise<SecretCheck> {
  try {
    const { box } = resolveSecretKey(config, store.dialect, config.DATABASE_URL || DEFAULT_SQLITE_PATH);
    return { webhook_secrets_to_rotate: await unreadableWebhookSecrets(store.db, box) };
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
    return { webhook_secrets_to_rotate: [], secret_key_problem: error.message };
  }
}

function secretLines(check: SecretCheck): string[] {
  if (check.secret_key_problem !== undefined) {
    return [`webhook signing secrets were not checked: ${check.secret_key_problem}`];
  }
  const endpoints = check.webhook_secrets_to_rotate;
  if (endpoints.length === 0) return [];
  return [
    `${endpoints.length} webhook endpoint(s) hold a signing secret this server's secret key cannot open ` +
      "(the backup was taken under another key). Their deliveries fail until each secret is rotated:",
    ...endpoints.map(
      (e) => `  ${e.id}  (project ${e.project_id}, ${e.url}): promptstore webhook update ${e.id} --rotate-secret`,
    ),
    "then give each receiver its new secret. Or start with the old key to keep the old secrets.",
  ];
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
        const check = await checkWebhookSecrets(config, store);
        emit(!!opts.json, { ...summary, ...check }, () =>
          [`restored ${total(summary)} rows from ${summary.file} into ${store.location}`, ...secretLines(check)].join(
            "\n",
          ),
        );
      } catch (error) {
        if (error instanceof RestoreRefused) throw new CliError(error.message);
        if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new CliError(`${file}: no such file`);
        throw error;
      } finally {
        await store.close();
      }
    });
}
