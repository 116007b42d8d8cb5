import { email as emailSchema, type Role, role as roleSchema } from "@promptstore/core/dashboard";
import type { Command } from "commander";
import { loadConfig } from "../../config.js";
import { AccountService } from "../../service/accounts/account-service.js";
import { AccountStore } from "../../store/accounts/accounts.js";
import { TenantStore } from "../../store/accounts/tenants.js";
import { openStore } from "../../store/index.js";
import { CliError, emit } from "../output.js";

interface JsonFlag {
  json?: boolean;
}

async function withAccounts<T>(work: (accounts: AccountService, tenants: TenantStore) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.DATABASE_URL);
  // Sessions are not started from the command line; the TTL only matters to the dashboard.
  const options = { sessionTtlMs: 0, passwordCost: config.PROMPTSTORE_PASSWORD_HASH_COST };
  try {
    return await work(new AccountService(new AccountStore(store.db), options), new TenantStore(store.db));
  } finally {
    await store.close();
  }
}

function parseEmail(value: string): string {
  const parsed = emailSchema.safeParse(value);
  if (!parsed.success) throw new CliError(`email: ${parsed.error.issues[0]?.message ?? "is invalid"}`);
  return parsed.data;
}

function parseRole(value: string): Role {
  const parsed = roleSchema.safeParse(value);
  if (!parsed.success) throw new CliError("role: must be owner, editor or viewer");
  return parsed.data;
}

async function organization(tenants: TenantStore, ref: string) {
  const org = await tenants.findOrganization(ref);
  if (!org) throw new CliError(`organization ${ref} not found`);
  return org;
}

/** Dashboard accounts: created with a one-time password that is printed once. */
export function registerUserCommands(program: Command): void {
  const user = program.command("user").description("manage dashboard accounts");
  user
    .command("create <email>")
    .description("create an account in an organization (a one-time password is printed once)")
    .requiredOption("--org <org>", "organization id or name")
    .option("--role <role>", "owner, editor or viewer", "editor")
    .option("--json", "machine-readable output")
    .action(async (rawEmail: string, opts: JsonFlag & { org: string; role: string }) => {
      const address = parseEmail(rawEmail);
      const chosenRole = parseRole(opts.role);
      const result = await withAccounts(async (accounts, tenants) => {
        const org = await organization(tenants, opts.org);
        const created = await accounts.createUser(address);
        if (!created)
          throw new CliError(
            `email: an account ${address} already exists; invite it instead (promptstore invite create)`,
          );
        await accounts.store.addMembership(org.id, created.user.id, chosenRole);
        return { id: created.user.id, email: address, password: created.password, org: org.name, role: chosenRole };
      });
      emit(!!opts.json, result, () =>
        [
          `created ${result.email} (${result.role} of ${result.org})`,
          `one-time password (shown once; a new one is chosen at first sign-in): ${result.password}`,
        ].join("\n"),
      );
    });
  user
    .command("set-password <email>")
    .description("give an account a new one-time password (printed once); its sessions end")
    .option("--json", "machine-readable output")
    .action(async (rawEmail: string, opts: JsonFlag) => {
      const address = parseEmail(rawEmail);
      const reset = await withAccounts((accounts) => accounts.resetPassword(address));
      if (!reset) throw new CliError(`user ${address} not found`);
      const result = { id: reset.user.id, email: address, password: reset.password };
      emit(!!opts.json, result, () => `new one-time password for ${address} (shown once): ${result.password}`);
    });
  user
    .command("list <org>")
    .description("list an organization's accounts and roles")
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: JsonFlag) => {
      const members = await withAccounts(async (accounts, tenants) =>
        accounts.members((await organization(tenants, ref)).id),
      );
      emit(!!opts.json, members, () =>
        members.length === 0
          ? "no accounts"
          : members.map((m) => `${m.email}  ${m.role}  since ${m.created_at}`).join("\n"),
      );
    });
  user
    .command("remove <email>")
    .description("delete an account with its memberships and sessions")
    .option("--json", "machine-readable output")
    .action(async (rawEmail: string, opts: JsonFlag) => {
      const address = parseEmail(rawEmail);
      const removed = await withAccounts(async (accounts) => {
        const found = await accounts.store.findUserByEmail(address);
        if (!found) throw new CliError(`user ${address} not found`);
        const outcome = await accounts.store.deleteUser(found.id);
        if (outcome.lastOwnerOf !== undefined) {
          throw new CliError(
            `user ${address} is the last owner of organization ${outcome.lastOwnerOf}; make another account owner first`,
          );
        }
        return { id: found.id, email: address, removed: true };
      });
      emit(!!opts.json, removed, () => `removed ${removed.email}`);
    });
}
