import { DEFAULT_KEY_SCOPE, isKeyScope, KEY_SCOPES, type KeyScope } from "@promptstore/core/accounts/key-scopes";
import { isPlanName, PLAN_NAMES, type PlanName } from "@promptstore/core/accounts/plans";
import type { Command } from "commander";
import { loadConfig } from "../../config.js";
import { TenantService } from "../../service/accounts/tenant-service.js";
import { ChangeBus } from "../../service/events/change-bus.js";
import { type Project, TenantStore } from "../../store/accounts/tenants.js";
import { openStore } from "../../store/index.js";
import { CliError, emit } from "../output.js";

interface JsonFlag {
  json?: boolean;
}

/**
 * Tenants changes made here are announced to every running server, and the command returns only once they
 * have all dropped what the change made stale: after `key revoke`, no instance accepts the key.
 */
async function withTenants<T>(work: (tenants: TenantService) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.DATABASE_URL, {
    invalidationTimeoutMs: config.PROMPTSTORE_INVALIDATION_TIMEOUT_MS,
  });
  try {
    return await work(
      new TenantService(new TenantStore(store.db), new ChangeBus(), async (change) =>
        (await store.channel.announce(store.db, change))?.delivered(),
      ),
    );
  } finally {
    await store.close();
  }
}

function plan(value: string): PlanName {
  if (!isPlanName(value)) throw new CliError(`plan: must be one of ${PLAN_NAMES.join(", ")}`);
  return value;
}

function keyScope(value: string): KeyScope {
  if (!isKeyScope(value)) throw new CliError(`scope: must be one of ${KEY_SCOPES.join(", ")}`);
  return value;
}

/** What the command line records as the actor of its changes in the audit trail. */
const CLI_ACTOR = "cli";

async function organization(tenants: TenantService, ref: string) {
  const org = await tenants.findOrganization(ref);
  if (!org) throw new CliError(`organization ${ref} not found`);
  return org;
}

async function project(tenants: TenantService, ref: string): Promise<Project> {
  const found = await tenants.findProjects(ref);
  if (found.length === 0) throw new CliError(`project ${ref} not found`);
  if (found.length > 1) throw new CliError(`project name ${ref} is ambiguous; use the project id`);
  return found[0] as Project;
}

/** The operator's commands: organizations, plans, projects and keys. */
export function registerAdminCommands(program: Command): void {
  const org = program.command("org").description("manage organizations");
  org
    .command("create <name>")
    .description("create an organization")
    .option("--plan <plan>", `one of ${PLAN_NAMES.join(", ")}`, "free")
    .option("--json", "machine-readable output")
    .action(async (name: string, opts: JsonFlag & { plan: string }) => {
      const chosen = plan(opts.plan);
      const created = await withTenants(async (t) => {
        if (await t.findOrganization(name)) throw new CliError(`organization ${name} already exists`);
        return t.createOrganization(name, chosen);
      });
      emit(!!opts.json, created, () => `created organization ${created.name} (${created.id}) on plan ${created.plan}`);
    });
  org
    .command("set-plan <org> <plan>")
    .description("change an organization's plan (org: id or name)")
    .option("--json", "machine-readable output")
    .action(async (ref: string, planName: string, opts: JsonFlag) => {
      const chosen = plan(planName);
      const updated = await withTenants(async (t) => {
        const found = await organization(t, ref);
        await t.setPlan(found.id, chosen, CLI_ACTOR);
        return { ...found, plan: chosen };
      });
      emit(!!opts.json, updated, () => `organization ${updated.name} (${updated.id}) is now on plan ${updated.plan}`);
    });

  program
    .command("project")
    .description("manage projects")
    .command("create <org> <name>")
    .description("create a project and its first API key (printed once)")
    .option("--json", "machine-readable output")
    .action(async (ref: string, name: string, opts: JsonFlag) => {
      const result = await withTenants(async (t) => {
        const found = await organization(t, ref);
        const created = await t.createProject(found.id, name);
        return { project: created, key: await t.createApiKey(created.id, { actor: CLI_ACTOR }) };
      });
      emit(!!opts.json, result, () =>
        [
          `created project ${result.project.name} (${result.project.id})`,
          `API key (shown once, store it now): ${result.key.key}`,
        ].join("\n"),
      );
    });

  const key = program.command("key").description("manage API keys");
  key
    .command("create <project>")
    .description("create an API key for a project (id or unique name); printed once")
    .option("--scope <scope>", `what the key may do: ${KEY_SCOPES.join(" < ")}`, DEFAULT_KEY_SCOPE)
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: JsonFlag & { scope: string }) => {
      const scope = keyScope(opts.scope);
      const created = await withTenants(async (t) =>
        t.createApiKey((await project(t, ref)).id, { scope, actor: CLI_ACTOR }),
      );
      emit(
        !!opts.json,
        created,
        () => `API key ${created.id}, scope ${created.scope} (shown once, store it now): ${created.key}`,
      );
    });
  key
    .command("list <project>")
    .description("list a project's keys by prefix, with their scope and last use (to the minute)")
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: JsonFlag) => {
      const keys = await withTenants(async (t) => t.listApiKeys((await project(t, ref)).id));
      emit(!!opts.json, keys, () =>
        keys.length === 0
          ? "no keys"
          : keys
              .map(
                (k) =>
                  `${k.id}  ${k.prefix}…  ${k.scope.padEnd(7)}  created ${k.created_at}  last used ${k.last_used_at ?? "never"}${k.revoked_at ? `  revoked ${k.revoked_at}` : ""}`,
              )
              .join("\n"),
      );
    });
  key
    .command("revoke <key-id>")
    .description("revoke a key; requests with it get 401")
    .option("--json", "machine-readable output")
    .action(async (keyId: string, opts: JsonFlag) => {
      const revoked = await withTenants((t) => t.revokeApiKey(keyId, { actor: CLI_ACTOR }));
      if (!revoked) throw new CliError(`key ${keyId} not found`);
      emit(!!opts.json, revoked, () => `revoked key ${revoked.id} (${revoked.prefix}…)`);
    });
}
