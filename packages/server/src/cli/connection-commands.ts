import { readFileSync } from "node:fs";
import { AppError } from "@promptstore/core/errors";
import { type ConnectionView, createConnectionBody } from "@promptstore/core/playground";
import { describeZodError } from "@promptstore/core/schemas";
import type { Command } from "commander";
import { loadConfig } from "../config.js";
import { openSecrets } from "../secrets/open-secrets.js";
import { ConnectionService } from "../service/playground/connection-service.js";
import { TenantStore } from "../store/accounts/tenants.js";
import { DEFAULT_SQLITE_PATH, openStore } from "../store/index.js";
import { PlaygroundStore } from "../store/playground.js";
import { CliError, emit } from "./output.js";

interface JsonFlag {
  json?: boolean;
}

/** The CLI's own store and service, with the server's secret key (the key is sealed as it is written). */
async function withConnections<T>(
  work: (connections: ConnectionService, tenants: TenantStore) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.DATABASE_URL);
  try {
    const secrets = await openSecrets(config, store, config.DATABASE_URL || DEFAULT_SQLITE_PATH);
    const service = new ConnectionService(new PlaygroundStore(store.db), secrets.box, {
      allowPrivate: config.PROMPTSTORE_MODEL_ALLOW_PRIVATE,
    });
    return await work(service, new TenantStore(store.db));
  } catch (error) {
    if (error instanceof AppError) throw new CliError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

async function projectId(tenants: TenantStore, ref: string): Promise<string> {
  const found = await tenants.findProjects(ref);
  if (found.length === 0) throw new CliError(`project ${ref} not found`);
  if (found.length > 1) throw new CliError(`project name ${ref} is ambiguous; use the project id`);
  return (found[0] as { id: string }).id;
}

/**
 * The provider key, from an environment variable or standard input: never from the command line itself,
 * where `ps` and the shell's history would show it.
 */
function apiKeyFrom(opts: { apiKeyEnv?: string; apiKeyStdin?: boolean }): string | undefined {
  if (opts.apiKeyEnv !== undefined && opts.apiKeyStdin)
    throw new CliError("api_key: give --api-key-env or --api-key-stdin, not both");
  if (opts.apiKeyEnv !== undefined) {
    const value = process.env[opts.apiKeyEnv];
    if (value === undefined || value === "")
      throw new CliError(`api_key: the environment variable ${opts.apiKeyEnv} is not set`);
    return value;
  }
  if (opts.apiKeyStdin) return readFileSync(0, "utf8").trim();
  return undefined;
}

const line = (c: ConnectionView) =>
  `${c.id}  ${c.name}  ${c.base_url}  ${c.has_key ? "key set" : "no key"}${c.models.length ? `  models: ${c.models.join(",")}` : ""}`;

/** `promptstore connection …`: a project's model connections for the playground (docs/playground.md). */
export function registerConnectionCommands(program: Command): void {
  const group = program
    .command("connection")
    .description("manage model connections (OpenAI-compatible APIs) for the playground");
  group
    .command("add <project>")
    .description(
      "add a connection to a project (id or unique name); the API key is sealed with the server's secret key",
    )
    .requiredOption("--name <name>", "a name people pick it by")
    .requiredOption("--base-url <url>", "the API's base URL, e.g. https://api.openai.com/v1")
    .option("--api-key-env <variable>", "read the API key from this environment variable")
    .option("--api-key-stdin", "read the API key from standard input")
    .option("--model <name>", "a model it offers (repeatable)", (value: string, all: string[] = []) => [...all, value])
    .option("--json", "machine-readable output")
    .action(
      async (
        ref: string,
        opts: JsonFlag & { name: string; baseUrl: string; apiKeyEnv?: string; apiKeyStdin?: boolean; model?: string[] },
      ) => {
        const apiKey = apiKeyFrom(opts);
        const parsed = createConnectionBody.safeParse({
          name: opts.name,
          base_url: opts.baseUrl,
          ...(apiKey !== undefined ? { api_key: apiKey } : {}),
          ...(opts.model ? { models: opts.model } : {}),
        });
        if (!parsed.success) throw new CliError(describeZodError(parsed.error, "body"));
        const created = await withConnections(async (c, t) =>
          c.create({ projectId: await projectId(t, ref), operator: true }, parsed.data),
        );
        emit(!!opts.json, created, () => `added connection ${line(created)}`);
      },
    );
  group
    .command("list <project>")
    .description("list a project's connections (keys are never shown)")
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: JsonFlag) => {
      const list = await withConnections(async (c, t) =>
        c.list({ projectId: await projectId(t, ref), access: "read" }),
      );
      emit(!!opts.json, list, () => (list.length === 0 ? "no connections" : list.map(line).join("\n")));
    });
  group
    .command("remove <connection-id>")
    .description("remove a connection")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: JsonFlag) => {
      const removed = await withConnections(async (c) => {
        const project = await c.store.projectOfConnection(id);
        if (project === undefined) throw new CliError(`connection ${id} not found`);
        return c.remove({ projectId: project, operator: true }, id);
      });
      emit(!!opts.json, removed, () => `removed connection ${id}`);
    });
}
