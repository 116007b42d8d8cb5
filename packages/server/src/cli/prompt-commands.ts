import { AppError } from "@promptstore/core/errors";
import type { Command } from "commander";
import { configuredContentLimits, loadConfig } from "../config.js";
import type { Caller } from "../service/access.js";
import { ChangeBus } from "../service/events/change-bus.js";
import { PromptService } from "../service/prompts/prompt-service.js";
import { webhookSink } from "../service/webhooks/webhook-service.js";
import { TenantStore } from "../store/accounts/tenants.js";
import { openStore, type Store } from "../store/index.js";
import { WebhookStore } from "../store/webhooks.js";
import { CliError, emit } from "./output.js";

interface JsonFlag {
  json?: boolean;
}

/**
 * The same PromptService the server runs, on the CLI's own store: the change is announced to every running
 * server (PostgreSQL: before the command returns; SQLite: a server notices another process's write within a
 * poll), recorded as an event, and queued for the project's webhooks, which running servers deliver.
 */
export async function withPrompts<T>(
  projectRef: string,
  work: (prompts: PromptService, caller: Caller, store: Store) => Promise<T>,
) {
  const config = loadConfig();
  const store = await openStore(config.DATABASE_URL, {
    invalidationTimeoutMs: config.PROMPTSTORE_INVALIDATION_TIMEOUT_MS,
  });
  try {
    const tenants = new TenantStore(store.db);
    const found = await tenants.findProjects(projectRef);
    if (found.length === 0) throw new CliError(`project ${projectRef} not found`);
    if (found.length > 1) throw new CliError(`project name ${projectRef} is ambiguous; use the project id`);
    const project = found[0] as (typeof found)[number];
    const org = await tenants.findOrganization(project.org_id);
    if (!org) throw new CliError(`project ${projectRef} not found`);
    const prompts = new PromptService(store, new ChangeBus(), {
      guardText: config.PROMPTSTORE_GUARD_TEXT,
      limits: configuredContentLimits(config),
    });
    prompts.addEventSink(webhookSink(new WebhookStore(store.db)));
    const caller: Caller = {
      projectId: project.id,
      projectName: project.name,
      orgId: org.id,
      plan: org.plan,
      actor: "cli",
      // The operator at the command line holds every power (and reads the database directly anyway).
      access: "publish",
    };
    return await work(prompts, caller, store);
  } catch (error) {
    // The service's refusals (an unknown prompt) are the user's to act on: one line, like every CLI failure.
    if (error instanceof AppError && error.status < 500) throw new CliError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

/** `promptstore prompt …`: what an operator does to a project's prompts without its API key. */
export function registerPromptCommands(program: Command): void {
  const prompt = program.command("prompt").description("manage a project's prompts");
  prompt
    .command("delete <project> <id>")
    .description(
      "delete a prompt with all its versions (project: id or unique name); cannot be undone, and the id becomes free",
    )
    .option("--json", "machine-readable output")
    .action(async (projectRef: string, id: string, opts: JsonFlag) => {
      const deleted = await withPrompts(projectRef, (prompts, caller) => prompts.delete(caller, id));
      emit(!!opts.json, deleted, () => `deleted prompt ${deleted.id} and all its versions`);
    });
}
