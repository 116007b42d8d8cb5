import { AppError } from "@promptstore/core/errors";
import type { Command } from "commander";
import { configuredContentLimits, loadConfig } from "../config.js";
import { openSecrets } from "../secrets/open-secrets.js";
import type { Caller } from "../service/access.js";
import { CheckRunner } from "../service/evaluations/check-runner.js";
import { DatasetService } from "../service/evaluations/dataset-service.js";
import { checkRequirement } from "../service/evaluations/evaluation-service.js";
import { RequiredEvaluations } from "../service/evaluations/label-gate.js";
import { ChangeBus } from "../service/events/change-bus.js";
import { ConnectionService } from "../service/playground/connection-service.js";
import { ExampleService } from "../service/playground/example-service.js";
import { RunService } from "../service/playground/run-service.js";
import { PromptService } from "../service/prompts/prompt-service.js";
import { WebhookSecrets } from "../service/webhooks/webhook-secrets.js";
import { webhookSink } from "../service/webhooks/webhook-service.js";
import { TenantStore } from "../store/accounts/tenants.js";
import { DatasetStore } from "../store/evaluations/datasets.js";
import { DEFAULT_SQLITE_PATH, openStore, type Store } from "../store/index.js";
import { LabelHistory } from "../store/outcomes/label-history.js";
import { PlaygroundStore } from "../store/playground.js";
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
    // What each label served when, as the server keeps it (docs/outcomes.md): outcomes are checked against it.
    prompts.addEventSink(new LabelHistory(store.db).sink);
    // The operator's moves pass the labels' required evaluations too; a requirement set here is checked as the
    // dashboard's is (the server's secret key is opened only then: it opens the connection's sealed key).
    prompts.setGate(new RequiredEvaluations(), async (caller, requirement) => {
      const secrets = await openSecrets(config, store, config.DATABASE_URL || DEFAULT_SQLITE_PATH);
      const connections = new ConnectionService(new PlaygroundStore(store.db), secrets.box, {
        allowPrivate: config.PROMPTSTORE_MODEL_ALLOW_PRIVATE,
      });
      const runs = new RunService(prompts, connections, {
        guardText: config.PROMPTSTORE_GUARD_TEXT,
        allowPrivate: config.PROMPTSTORE_MODEL_ALLOW_PRIVATE,
        timeoutMs: config.PROMPTSTORE_MODEL_TIMEOUT_SECONDS * 1000,
        totalTimeoutMs: config.PROMPTSTORE_MODEL_TOTAL_TIMEOUT_SECONDS * 1000,
        maxAnswerBytes: config.PROMPTSTORE_MODEL_MAX_ANSWER_BYTES,
      });
      const examples = new ExampleService(new PlaygroundStore(store.db), prompts, runs);
      const datasets = new DatasetService(new DatasetStore(store.db, store.operations), {
        maxCases: config.PROMPTSTORE_DATASET_MAX_CASES,
        maxImportBytes: config.PROMPTSTORE_DATASET_MAX_IMPORT_BYTES,
        examplesOf: (caller, promptId) => examples.list(caller, promptId),
      });
      const checks = new CheckRunner({
        runs,
        prompts,
        webhooks: {
          endpoints: new WebhookStore(store.db),
          secrets: new WebhookSecrets(secrets.box),
          timeoutMs: config.PROMPTSTORE_WEBHOOK_TIMEOUT_MS,
          allowPrivate: config.PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE,
        },
      });
      await checkRequirement({ datasets, runs, checks }, caller, requirement);
    });
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
