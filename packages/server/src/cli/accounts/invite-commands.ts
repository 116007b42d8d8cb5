import { email as emailSchema, type InvitationView, role as roleSchema } from "@promptstore/core/dashboard";
import { AppError } from "@promptstore/core/errors";
import type { Command } from "commander";
import { loadConfig } from "../../config.js";
import { AccountService } from "../../service/accounts/account-service.js";
import { InvitationService } from "../../service/accounts/invitation-service.js";
import { AccountStore } from "../../store/accounts/accounts.js";
import { InvitationStore } from "../../store/accounts/invitations.js";
import { TenantStore } from "../../store/accounts/tenants.js";
import { openStore } from "../../store/index.js";
import { CliError, emit } from "../output.js";

interface JsonFlag {
  json?: boolean;
}

async function withInvitations<T>(
  work: (invitations: InvitationService, tenants: TenantStore) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.DATABASE_URL);
  try {
    const accounts = new AccountService(new AccountStore(store.db), {
      sessionTtlMs: 0,
      passwordCost: config.PROMPTSTORE_PASSWORD_HASH_COST,
    });
    const invitations = new InvitationService(new InvitationStore(store.db), accounts, {
      ttlMs: config.PROMPTSTORE_INVITATION_DAYS * 86_400_000,
    });
    return await work(invitations, new TenantStore(store.db));
  } catch (error) {
    if (error instanceof AppError && error.status < 500) throw new CliError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

async function orgId(tenants: TenantStore, ref: string): Promise<string> {
  const org = await tenants.findOrganization(ref);
  if (!org) throw new CliError(`organization ${ref} not found`);
  return org.id;
}

const line = (i: InvitationView) =>
  `${i.id}  ${i.status.padEnd(8)}  ${i.email}  ${i.role}  by ${i.invited_by}  expires ${i.expires_at}`;

/** `promptstore invite …`: the operator invites like an owner does; `user create` stays for the operator's own accounts. */
export function registerInviteCommands(program: Command): void {
  const invite = program.command("invite").description("invite people into an organization (they accept by link)");
  invite
    .command("create <org> <email>")
    .description("invite an e-mail address; the link is printed once")
    .option("--role <role>", "owner, editor or viewer", "editor")
    .option("--base-url <url>", "the dashboard's address, to print the whole link (e.g. https://prompts.example.com)")
    .option("--json", "machine-readable output")
    .action(async (ref: string, rawEmail: string, opts: JsonFlag & { role: string; baseUrl?: string }) => {
      const address = emailSchema.safeParse(rawEmail);
      if (!address.success) throw new CliError(`email: ${address.error.issues[0]?.message ?? "is invalid"}`);
      const role = roleSchema.safeParse(opts.role);
      if (!role.success) throw new CliError("role: must be owner, editor or viewer");
      const created = await withInvitations(async (invitations, tenants) =>
        invitations.invite({ orgId: await orgId(tenants, ref), actor: "cli" }, address.data, role.data),
      );
      const link = opts.baseUrl ? `${opts.baseUrl.replace(/\/+$/, "")}${created.link}` : created.link;
      emit(!!opts.json, { ...created, link }, () =>
        [
          `invited ${created.email} as ${created.role} (${created.id}), until ${created.expires_at}`,
          `link (shown once; send it to them): ${link}`,
        ].join("\n"),
      );
    });
  invite
    .command("list <org>")
    .description("an organization's invitations, newest first, with their status")
    .option("--json", "machine-readable output")
    .action(async (ref: string, opts: JsonFlag) => {
      const list = await withInvitations(async (invitations, tenants) => invitations.list(await orgId(tenants, ref)));
      emit(!!opts.json, list, () => (list.length === 0 ? "no invitations" : list.map(line).join("\n")));
    });
  invite
    .command("revoke <org> <invitation-id>")
    .description("revoke a pending invitation: its link no longer works")
    .option("--json", "machine-readable output")
    .action(async (ref: string, id: string, opts: JsonFlag) => {
      const revoked = await withInvitations(async (invitations, tenants) =>
        invitations.revoke({ orgId: await orgId(tenants, ref), actor: "cli" }, id),
      );
      emit(!!opts.json, revoked, () => `revoked ${line(revoked)}`);
    });
}
